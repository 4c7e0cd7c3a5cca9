package conformance

func init() {
	register(&scenario{
		Name:          "moduleload",
		Upstream:      "unittest/moduleload.cs, native/moduleload",
		UpstreamLines: 137,
		CLSID:         "{2E6F4A83-7D1B-4C59-A0E2-8B3C5D7F9A06}",
	})
}
