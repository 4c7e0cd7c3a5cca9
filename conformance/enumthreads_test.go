package conformance

func init() {
	register(&scenario{
		Name:          "enumthreads",
		Upstream:      "unittest/enumthreads.cs, native/enumthreadsprofiler",
		UpstreamLines: 136,
		CLSID:         "{8E4A2C67-1B9D-4F30-A5E8-6C3D7B1F9E14}",
	})
}
