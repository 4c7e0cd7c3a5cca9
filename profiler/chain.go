package profiler

// #include <stdint.h>
// #include <stdlib.h>
// #include "chain.h"
import "C"

import (
	"context"
	"debug/elf"
	"fmt"
	"log/slog"
	"os"
	"unsafe"

	"github.com/clrprof/clrprof/internal/cgoutil"
	"github.com/google/uuid"
)

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

// clrprofGoChainConfig fills path (n bytes) and clsid with the chained
// profiler to load and reports whether there is one.
//
//export clrprofGoChainConfig
func clrprofGoChainConfig(path *C.char, n C.int, clsid *C.GUID) (ok C.int) {
	defer recoverExport("chain", func() { ok = 0 })
	p, u, on := chainConfig(registered.Load())
	if !on {
		return 0
	}
	if len(p)+1 > int(n) {
		logger().Error("chain: the chained profiler's path is too long; running without it", "path", p)
		return 0
	}
	buf := unsafe.Slice((*byte)(unsafe.Pointer(path)), int(n))
	copy(buf, p)
	buf[len(p)] = 0
	*(*cgoutil.GUID)(unsafe.Pointer(clsid)) = cgoutil.ToGUID(u)
	return 1
}

// clrprofGoChainLog logs a record of chain.c.
//
//export clrprofGoChainLog
func clrprofGoChainLog(level C.int, msg *C.char) {
	defer recoverExport("chain", nil)
	logger().Log(context.Background(), slog.Level(level), C.GoString(msg))
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
	if C.clrprof_chain.cb == nil {
		return ChainedProfiler{}, false
	}
	var lo, hi C.uint32_t
	C.clrprof_chain_masks(C.CLRPROF_PARTY_CHAIN, &lo, &hi)
	return ChainedProfiler{
		Active:   C.clrprof_chain.active != 0,
		Version:  int(C.clrprof_chain.version),
		Mask:     Monitor(lo),
		MaskHigh: HighMonitor(hi),
	}, true
}

// String is a one-line description for logs.
func (c ChainedProfiler) String() string {
	return fmt.Sprintf("chained profiler (ICorProfilerCallback%d, active %v, mask %#x/%#x)", c.Version, c.Active, uint32(c.Mask), uint32(c.MaskHigh))
}

// otherIdentity is what another loaded library says it is (its
// clrprof_identity): "" for a Go library that is not a clrprof profiler.
func otherIdentity(path string) string {
	cs := C.CString(path)
	defer C.free(unsafe.Pointer(cs))
	return C.GoString(C.clrprof_other_identity(cs))
}

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
	cs := C.CString(fmt.Sprintf("%s %s", guidString(r.clsid), r.implType))
	defer C.free(unsafe.Pointer(cs))
	C.clrprof_set_identity(cs)
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
