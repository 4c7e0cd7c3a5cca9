package conformance

func init() {
	register(&scenario{
		Name:          "gcbasic",
		Upstream:      "gc/gcbasic.cs, native/gcbasicprofiler",
		UpstreamLines: 0,
		CLSID:         "{A040B953-EDE7-42D9-9077-AA69BB2BE024}",
	})
}
