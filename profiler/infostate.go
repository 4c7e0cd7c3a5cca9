package profiler

import "sync/atomic"

// infoState is what the SDK keeps for one Info, beside the runtime's
// interfaces: it lives and dies with the Info (a field of it, declared by
// the generator in info_gen.go), instead of in package-level tables keyed
// by *Info.
type infoState struct {
	imports importCache   // one metadata reader per module (importcache.go)
	canon   canonRegistry // canonical generic instantiations (canonical.go)
	notif   atomic.Bool   // loaded as a notification profiler (notification.go)
}

// cacheOf returns x's metadata reader cache (an empty one, watching
// nothing, for a nil Info).
func cacheOf(x *Info) *importCache {
	if x == nil {
		return &importCache{}
	}
	return &x.state.imports
}

// canonOf returns x's record of canonical instantiations (an empty one,
// watching nothing, for a nil Info).
func canonOf(x *Info) *canonRegistry {
	if x == nil {
		return &canonRegistry{}
	}
	return &x.state.canon
}
