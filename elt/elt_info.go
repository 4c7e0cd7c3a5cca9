package elt

/*
#include <string.h>
#include "elt.h"

static void clrprof_copy_from(void *dst, uintptr_t src, size_t n) { memcpy(dst, (const void *)src, n); }
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unsafe"

	com "github.com/clrprof/clrprof/internal/com"
	"github.com/clrprof/clrprof/internal/profimpl"
	"github.com/clrprof/clrprof/profiler"
)

// CallOptions configures [EnableWithInfo].
type CallOptions struct {
	// Call runs synchronously on the runtime thread, for every hooked
	// enter, leave and tail call, while the method's frame is live. It runs
	// in cooperative mode (the runtime cannot collect garbage until it
	// returns): keep it short, and never block on a lock that a goroutine
	// holds while it calls into the runtime. Required.
	Call func(*Call)
	// Filter, when set, chooses the functions to hook (as in Options).
	Filter func(profiler.FunctionID) bool
	// Args asks for the argument ranges (EnableFunctionArgs), Return for
	// the return value range (EnableFunctionRetVal), Frame for the frame
	// info of generic instantiations (EnableFrameInfo).
	Args, Return, Frame bool
}

// Call is one hook call of the WithInfo path. It is valid only during
// the Call callback.
type Call struct {
	// Function is the function entered or left.
	Function profiler.FunctionID
	// Kind says which hook this is: enter, leave or tail call.
	Kind Kind
	info *profiler.Info
	elt  profiler.ELTInfo
}

// EnableWithInfo installs the WithInfo enter/leave/tailcall hooks
// (SetEnterLeaveFunctionHooks3WithInfo): the runtime saves the registers
// itself and calls the SDK's C hooks, which call opts.Call synchronously
// (under the same signal guard as every callback; this path costs a Go
// transition and two system calls per event, so prefer [NewRecorder]
// when IDs and times are enough). Call it from Initialize. Only one of
// NewRecorder and EnableWithInfo can be used in a process.
//
// On .NET 10 with runtime async on (DOTNET_RuntimeAsync=1) the runtime's
// leave helper corrupts a runtime-async return (dotnet/runtime#122475,
// fixed in .NET 11), so these hooks are not given to any method that may
// have an async variant: methods with MethodImplAttributes.Async and
// methods declared to return Task, Task<T>, ValueTask or ValueTask<T>
// (docs/runtime-async.md). Runtime async's enter/leave pattern is
// NewRecorder's.
func EnableWithInfo(info *profiler.Info, opts CallOptions) error {
	if opts.Call == nil {
		return errors.New("clrprof: elt.EnableWithInfo: CallOptions.Call is nil")
	}
	if err := profimpl.CheckNotification(info, "elt.EnableWithInfo"); err != nil {
		return err
	}
	if profimpl.Ptr(info, 3) == nil {
		return profimpl.NotAvailable("ICorProfilerInfo3::SetEnterLeaveFunctionHooks3WithInfo", 3, info.Version())
	}
	if err := eltCalled(info, "elt.EnableWithInfo"); err != nil {
		return err
	}
	eltState.mu.Lock()
	defer eltState.mu.Unlock()
	if eltState.enabled {
		return errors.New("clrprof: elt.EnableWithInfo: enter/leave hooks are already installed (the runtime takes one set per process)")
	}
	if err := installMapper(info, opts.Filter, newELTGuard(info, true)); err != nil {
		return err
	}
	add := profiler.MonitorEnterLeave
	if opts.Args {
		add |= profiler.EnableFunctionArgs
	}
	if opts.Return {
		add |= profiler.EnableFunctionRetVal
	}
	if opts.Frame {
		add |= profiler.EnableFrameInfo
	}
	if err := addEventMask(info, add); err != nil {
		return fmt.Errorf("clrprof: elt.EnableWithInfo: %w", err)
	}
	if err := profimpl.SetEnterLeaveFunctionHooks3WithInfo(info, C.clrprof_elt_info_hook(0), C.clrprof_elt_info_hook(1), C.clrprof_elt_info_hook(2)); err != nil {
		return fmt.Errorf("clrprof: elt.EnableWithInfo: SetEnterLeaveFunctionHooks3WithInfo: %w", err)
	}
	call := opts.Call
	eltState.call.Store(&call)
	eltState.callInfo.Store(info)
	eltState.enabled = true
	C.clrprof_elt_on = 1
	return nil
}

// DisableWithInfo makes the WithInfo hooks return at once without
// calling Go (they cannot be removed from the runtime). Call it from
// Shutdown.
func DisableWithInfo() {
	C.clrprof_elt_on = 0
	eltState.call.Store(nil)
}

// clrprofGoELTCall is called by the WithInfo hooks.
//
//export clrprofGoELTCall
func clrprofGoELTCall(f C.uintptr_t, elt C.uintptr_t, kind C.int) {
	defer profimpl.RecoverExport("ELT WithInfo hook", nil)
	fn := eltState.call.Load()
	info := eltState.callInfo.Load()
	if fn == nil || info == nil {
		return
	}
	c := Call{Function: profiler.FunctionID(f), Kind: Kind(kind), info: info, elt: profiler.ELTInfo(elt)}
	(*fn)(&c)
}

// Frame returns the frame info of this call (for [profiler.Info.FunctionFullName]
// and generic instantiations); it needs CallOptions.Frame.
func (c *Call) Frame() (profiler.FrameInfo, error) {
	switch c.Kind {
	case Enter:
		fr, _, err := c.enterInfo()
		return fr, err
	case Leave:
		r, err := c.info.GetFunctionLeave3Info(c.Function, c.elt)
		return r.FrameInfo, err
	case Tailcall:
		return c.info.GetFunctionTailcall3Info(c.Function, c.elt)
	}
	return 0, fmt.Errorf("clrprof: Call.Frame: kind %v", c.Kind)
}

// argumentInfo mirrors the C struct COR_PRF_FUNCTION_ARGUMENT_INFO
// (variable-length: NumRanges ranges from Ranges on).
type argumentInfo struct {
	NumRanges         uint32
	TotalArgumentSize uint32
	Ranges            [1]profiler.FunctionArgumentRange
}

func getFunctionEnter3Info(c *Call, size, buf unsafe.Pointer) (profiler.FrameInfo, error) {
	fr, err := profimpl.GetFunctionEnter3Info(c.info, uintptr(c.Function), uintptr(c.elt), size, buf)
	return profiler.FrameInfo(fr), err
}

// maxArgInfo bounds the argument description the runtime may ask for.
const maxArgInfo = 1 << 16

// Args returns the argument ranges of an enter call (the `this` pointer
// first for an instance method), each copied out of the frame. It needs
// CallOptions.Args.
func (c *Call) Args() ([]Arg, error) {
	if c.Kind != Enter {
		return nil, fmt.Errorf("clrprof: Call.Args: only on enter, not %v", c.Kind)
	}
	_, args, err := c.enterInfo()
	return args, err
}

// enterInfo calls GetFunctionEnter3Info twice: for the size, then for the
// frame and the ranges.
func (c *Call) enterInfo() (profiler.FrameInfo, []Arg, error) {
	var size uint32
	fr, err := getFunctionEnter3Info(c, unsafe.Pointer(&size), nil)
	if err != nil && !errors.Is(err, com.HRESULT(com.InsufficientBuffer)) {
		return 0, nil, fmt.Errorf("clrprof: GetFunctionEnter3Info: %w", err)
	}
	if size == 0 {
		return fr, nil, nil
	}
	if size > maxArgInfo {
		return 0, nil, fmt.Errorf("clrprof: GetFunctionEnter3Info: argument info of %d bytes", size)
	}
	buf := make([]uint64, (int(size)+7)/8)
	fr, err = getFunctionEnter3Info(c, unsafe.Pointer(&size), unsafe.Pointer(&buf[0]))
	if err != nil {
		return 0, nil, fmt.Errorf("clrprof: GetFunctionEnter3Info: %w", err)
	}
	ai := (*argumentInfo)(unsafe.Pointer(&buf[0]))
	n := int(ai.NumRanges)
	rangeSize := int(unsafe.Sizeof(profiler.FunctionArgumentRange{}))
	off := int(unsafe.Offsetof(ai.Ranges))
	if n < 0 || off+n*rangeSize > len(buf)*8 {
		return 0, nil, fmt.Errorf("clrprof: GetFunctionEnter3Info: %d ranges do not fit %d bytes", n, size)
	}
	if n == 0 {
		return fr, nil, nil
	}
	ranges := unsafe.Slice((*profiler.FunctionArgumentRange)(unsafe.Pointer(&ai.Ranges[0])), n)
	args := make([]Arg, 0, n)
	for _, r := range ranges {
		args = append(args, readArg(r))
	}
	return fr, args, nil
}

// Return returns the return value range of a leave call (empty for a void
// method). It needs CallOptions.Return.
func (c *Call) Return() (Arg, error) {
	if c.Kind != Leave {
		return Arg{}, fmt.Errorf("clrprof: Call.Return: only on leave, not %v", c.Kind)
	}
	r, err := c.info.GetFunctionLeave3Info(c.Function, c.elt)
	if err != nil {
		return Arg{}, fmt.Errorf("clrprof: GetFunctionLeave3Info: %w", err)
	}
	return readArg(r.RetValRange), nil
}

// maxArgBytes bounds one copied range.
const maxArgBytes = 1 << 20

func readArg(r profiler.FunctionArgumentRange) Arg {
	a := Arg{Addr: r.StartAddress}
	if r.StartAddress != 0 && r.Length > 0 && r.Length <= maxArgBytes {
		a.Data = make([]byte, r.Length)
		C.clrprof_copy_from(unsafe.Pointer(&a.Data[0]), C.uintptr_t(r.StartAddress), C.size_t(r.Length))
	}
	return a
}

// Arg is one argument (or return value) as the runtime laid it out: the
// address it had in the frame and a copy of its bytes. The typed readers
// fail unless the size matches the type.
type Arg struct {
	// Addr is where the argument lies in memory (on the stack or in a
	// register's spill slot), valid only during the hook.
	Addr profiler.Address
	// Data is a copy of the argument's bytes.
	Data []byte
}

func (a Arg) fixed(n int, what string) ([]byte, error) {
	if len(a.Data) != n {
		return nil, fmt.Errorf("clrprof: argument of %d bytes read as %s (%d bytes)", len(a.Data), what, n)
	}
	return a.Data, nil
}

// Int32 reads an int32 (C# int).
func (a Arg) Int32() (int32, error) {
	b, err := a.fixed(4, "int32")
	if err != nil {
		return 0, err
	}
	return int32(binary.LittleEndian.Uint32(b)), nil
}

// Int64 reads an int64 (C# long).
func (a Arg) Int64() (int64, error) {
	b, err := a.fixed(8, "int64")
	if err != nil {
		return 0, err
	}
	return int64(binary.LittleEndian.Uint64(b)), nil
}

// Float32 reads a float32 (C# float).
func (a Arg) Float32() (float32, error) {
	b, err := a.fixed(4, "float32")
	if err != nil {
		return 0, err
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(b)), nil
}

// Float64 reads a float64 (C# double).
func (a Arg) Float64() (float64, error) {
	b, err := a.fixed(8, "float64")
	if err != nil {
		return 0, err
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
}

// Bool reads a C# bool (one byte).
func (a Arg) Bool() (bool, error) {
	b, err := a.fixed(1, "bool")
	if err != nil {
		return false, err
	}
	return b[0] != 0, nil
}

// Object reads an object reference (valid only during the hook).
func (a Arg) Object() (profiler.ObjectID, error) {
	b, err := a.fixed(8, "object reference")
	if err != nil {
		return 0, err
	}
	return profiler.ObjectID(binary.LittleEndian.Uint64(b)), nil
}
