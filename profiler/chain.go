package profiler

// Chaining is package internal/chain (its C and exports); this file holds
// what users call and the configuration, and forwards to it.

import (
	"debug/elf"
	"fmt"
	"os"

	"github.com/clrprof/clrprof/internal/chain"
	"github.com/google/uuid"
)

func init() {
	chain.SetHooks(chain.Hooks{
		Config: func() (chain.Config, bool) {
			path, clsid, ok := chainConfig(registered.Load())
			return chain.Config{Path: path, CLSID: clsid}, ok
		},
		Logger: logger,
		Panic:  reportPanic,
	})
}

// The environment variables that make every profiler built with this
// package chain a native profiler (see "Sharing the process with another
// profiler" in the package documentation). They win over WithChain.
const (
	EnvChainPath  = "CLRPROF_CHAIN_PATH"
	EnvChainCLSID = "CLRPROF_CHAIN_CLSID"
)

// WithChain makes the profiler load a second, native profiler library at
// start-up and run it beside the Go profiler: path is the shared library
// (as CORECLR_PROFILER_PATH would name it) and clsid the class it exports
// (as CORECLR_PROFILER would). CLRPROF_CHAIN_PATH and CLRPROF_CHAIN_CLSID,
// when set, replace both. An empty path chains nothing.
func WithChain(path, clsid string) Option {
	return func(o *options) { o.chainPath, o.chainCLSID = path, clsid }
}

// chainConfig is what the first profiler object chains: the environment's
// pair, else WithChain's; ok is false when nothing (or something invalid)
// is configured.
func chainConfig(r *registration) (path string, clsid uuid.UUID, ok bool) {
	path, id, from := os.Getenv(EnvChainPath), os.Getenv(EnvChainCLSID), "environment ("+EnvChainPath+", "+EnvChainCLSID+")"
	if path == "" && r != nil {
		path, id, from = r.chainPath, r.chainCLSID, "WithChain"
	}
	if path == "" {
		return "", uuid.UUID{}, false
	}
	u, err := parseCLSID(id)
	if err != nil {
		logger().Error("chain: the chained profiler's CLSID is invalid; running without it", "from", from, "path", path, "clsid", id, "err", err)
		return "", uuid.UUID{}, false
	}
	if goLibrary(path) {
		logger().Error("chain: the chained profiler is a Go library; its Go runtime cannot share this process with this one's, so it is not loaded. "+
			"Build both Go profilers into one library with profiler.Compose instead", "path", path, "clsid", guidString(u))
		return "", uuid.UUID{}, false
	}
	if r != nil && u == r.clsid {
		logger().Error("chain: the chained profiler's CLSID is this library's own; running without it", "from", from, "path", path, "clsid", guidString(u))
		return "", uuid.UUID{}, false
	}
	return path, u, true
}

// ChainedProfiler describes the native profiler chained beside this one.
type ChainedProfiler struct {
	// Active is true while callbacks are forwarded to it.
	Active bool
	// Version is the highest ICorProfilerCallbackN it implements.
	Version int
	// Mask and MaskHigh are the event mask it asked for; the runtime runs
	// with the union of its mask and the Go profiler's.
	Mask     Monitor
	MaskHigh HighMonitor
}

// Chained reports the native profiler chained beside this one (see
// WithChain), and false when there is none.
func Chained() (ChainedProfiler, bool) {
	st, ok := chain.Chained()
	if !ok {
		return ChainedProfiler{}, false
	}
	return ChainedProfiler{
		Active:   st.Active,
		Version:  st.Version,
		Mask:     Monitor(st.MaskLo),
		MaskHigh: HighMonitor(st.MaskHi),
	}, true
}

// String is a one-line description for logs.
func (c ChainedProfiler) String() string {
	return fmt.Sprintf("chained profiler (ICorProfilerCallback%d, active %v, mask %#x/%#x)", c.Version, c.Active, uint32(c.Mask), uint32(c.MaskHigh))
}

// otherIdentity is what another loaded library says it is (its
// clrprof_identity): "" for a Go library that is not a clrprof profiler.
func otherIdentity(path string) string { return chain.OtherIdentity(path) }

// otherGoError is why a second Go library declines: which library holds
// the process and how to run both profilers instead.
func otherGoError(path, identity string) error {
	who := path
	if identity != "" {
		who = fmt.Sprintf("%s, the clrprof profiler %s", path, identity)
	}
	return fmt.Errorf("clrprof: another Go runtime is already loaded in this process (%s); two Go runtimes in one process are unsupported "+
		"(each has its own scheduler, signal handlers and heap, and they take each other's signals). "+
		"To run both profilers, build them into one library with profiler.Compose, "+
		"or load a native (C/C++) profiler beside this one with CLRPROF_CHAIN_PATH/CLRPROF_CHAIN_CLSID (profiler.WithChain)", who)
}

// setIdentity publishes the registered profiler in clrprof_identity.
func setIdentity(r *registration) {
	chain.SetIdentity(fmt.Sprintf("%s %s", guidString(r.clsid), r.implType))
}

// goLibrary reports whether the shared library at path carries a Go
// runtime (it has Go's build information), without loading it.
func goLibrary(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return f.Section(".go.buildinfo") != nil
}
