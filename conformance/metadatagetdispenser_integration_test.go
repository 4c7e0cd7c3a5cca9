package conformance

func init() {
	register(&scenario{
		Name:     "metadatagetdispenser",
		Upstream: "unittest/metadatagetdispenser.cs, native/metadatagetdispenser",
		// metadatagetdispenser.cpp 252 + .h 33, as stored upstream.
		UpstreamLines: 285,
		CLSID:         "{7198FF3E-50E8-4AD1-9B89-CB15A1D6E740}",
		// Every runtime the suite runs on exports MetaDataGetDispenser from
		// libcoreclr.so (nm -D: 2.0.0, 2.1.30, 3.1.23, 8.0.4).
	})
}
