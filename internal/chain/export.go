package chain

// The Go exports chain.c calls. They live in this package because a C file
// can call only the exports of its own package by name (through its
// _cgo_export.h); they reach package profiler through the hooks.

// #include <stdint.h>
// #include "chain.h"
import "C"

import (
	"context"
	"log/slog"
	"runtime/debug"
	"unsafe"

	"github.com/clrprof/clrprof/internal/cgoutil"
)

// recoverExport is deferred by each export: a panic must not unwind into
// C. It is reported through the Panic hook, and onPanic sets the answer.
func recoverExport(h *Hooks, onPanic func()) {
	if r := recover(); r != nil {
		if h != nil && h.Panic != nil {
			h.Panic("chain", r, debug.Stack())
		}
		if onPanic != nil {
			onPanic()
		}
	}
}

// clrprofGoChainConfig fills path (n bytes) and clsid with the chained
// profiler to load and reports whether there is one.
//
//export clrprofGoChainConfig
func clrprofGoChainConfig(path *C.char, n C.int, clsid *C.GUID) (ok C.int) {
	h := hooks.Load()
	defer recoverExport(h, func() { ok = 0 })
	if h == nil || h.Config == nil {
		return 0
	}
	cfg, on := h.Config()
	if !on {
		return 0
	}
	if len(cfg.Path)+1 > int(n) {
		if h.Logger != nil {
			h.Logger().Error("chain: the chained profiler's path is too long; running without it", "path", cfg.Path)
		}
		return 0
	}
	buf := unsafe.Slice((*byte)(unsafe.Pointer(path)), int(n))
	copy(buf, cfg.Path)
	buf[len(cfg.Path)] = 0
	*(*cgoutil.GUID)(unsafe.Pointer(clsid)) = cgoutil.ToGUID(cfg.CLSID)
	return 1
}

// clrprofGoChainLog logs a record of chain.c.
//
//export clrprofGoChainLog
func clrprofGoChainLog(level C.int, msg *C.char) {
	h := hooks.Load()
	defer recoverExport(h, nil)
	if h == nil || h.Logger == nil {
		return
	}
	h.Logger().Log(context.Background(), slog.Level(level), C.GoString(msg))
}
