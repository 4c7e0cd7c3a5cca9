package conformance

func init() {
	register(&scenario{
		Name:          "enumthreads",
		Upstream:      "unittest/enumthreads.cs, native/enumthreadsprofiler",
		UpstreamLines: 138,
		CLSID:         "{0742962D-2ED3-44B0-BA84-06B1EF0A0A0B}",
	})
}
