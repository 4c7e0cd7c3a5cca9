package profiler

/*
#include <string.h>
#include "elt.h"
#include "eltcommon.h"
#include "eltcount.h"

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
)

// ELTCallOptions configures [Info.EnableELTWithInfo].
type ELTCallOptions struct {
	// Call runs synchronously on the runtime thread, for every hooked
	// enter, leave and tail call, while the method's frame is live. It runs
	// in cooperative mode (the runtime cannot collect garbage until it
	// returns): keep it short, and never block on a lock that a goroutine
	// holds while it calls into the runtime. Required.
	Call func(*ELTCall)
	// Filter, when set, chooses the functions to hook (as in ELTOptions).
	Filter func(FunctionID) bool
	// Args asks for the argument ranges (EnableFunctionArgs), Return for
	// the return value range (EnableFunctionRetVal), Frame for the frame
	// info of generic instantiations (EnableFrameInfo).
	Args, Return, Frame bool
}

// ELTCall is one hook call of the WithInfo path. It is valid only during
// the Call callback.
type ELTCall struct {
	// Function is the function entered or left.
	Function FunctionID
	// Kind says which hook this is: enter, leave or tail call.
	Kind ELTKind
	info *Info
	elt  ELTInfo
}

// EnableELTWithInfo installs the WithInfo enter/leave/tailcall hooks
// (SetEnterLeaveFunctionHooks3WithInfo): the runtime saves the registers
// itself and calls the SDK's C hooks, which call opts.Call synchronously
// (under the same signal guard as every callback; this path costs a Go
// transition and two system calls per event, so prefer [Info.EnableELT]
// when IDs and times are enough). Call it from Initialize. Only one of
// EnableELT and EnableELTWithInfo can be used in a process.
//
// On .NET 10 with runtime async on (DOTNET_RuntimeAsync=1) the runtime's
// leave helper corrupts a runtime-async return (dotnet/runtime#122475,
// fixed in .NET 11), so these hooks are not given to any method that may
// have an async variant: methods with MethodImplAttributes.Async and
// methods declared to return Task, Task<T>, ValueTask or ValueTask<T>
// (docs/runtime-async.md). Runtime async's enter/leave pattern is
// EnableELT's.
func (x *Info) EnableELTWithInfo(opts ELTCallOptions) error {
	if opts.Call == nil {
		return errors.New("clrprof: EnableELTWithInfo: ELTCallOptions.Call is nil")
	}
	if err := x.checkNotification("EnableELTWithInfo"); err != nil {
		return err
	}
	if x.ptr(3) == nil {
		return notAvailable("ICorProfilerInfo3::SetEnterLeaveFunctionHooks3WithInfo", 3, x.Version())
	}
	if err := x.eltCalled("EnableELTWithInfo"); err != nil {
		return err
	}
	eltState.mu.Lock()
	defer eltState.mu.Unlock()
	if eltState.enabled {
		return errors.New("clrprof: EnableELTWithInfo: enter/leave hooks are already installed (the runtime takes one set per process)")
	}
	if err := x.installMapper(opts.Filter, x.newELTGuard(true)); err != nil {
		return err
	}
	add := MonitorEnterLeave
	if opts.Args {
		add |= EnableFunctionArgs
	}
	if opts.Return {
		add |= EnableFunctionRetVal
	}
	if opts.Frame {
		add |= EnableFrameInfo
	}
	if err := x.addEventMask(add); err != nil {
		return fmt.Errorf("clrprof: EnableELTWithInfo: %w", err)
	}
	if err := x.setEnterLeaveFunctionHooks3WithInfo(C.clrprof_elt_info_hook(0), C.clrprof_elt_info_hook(1), C.clrprof_elt_info_hook(2)); err != nil {
		return fmt.Errorf("clrprof: EnableELTWithInfo: SetEnterLeaveFunctionHooks3WithInfo: %w", err)
	}
	call := opts.Call
	eltState.call.Store(&call)
	eltState.callInfo.Store(x)
	eltState.enabled = true
	C.clrprof_elt_on = 1
	return nil
}

// DisableELTWithInfo makes the WithInfo hooks return at once without
// calling Go (they cannot be removed from the runtime). Call it from
// Shutdown.
func DisableELTWithInfo() {
	C.clrprof_elt_on = 0
	eltState.call.Store(nil)
}

// clrprofGoELTCall is called by the WithInfo hooks.
//
//export clrprofGoELTCall
func clrprofGoELTCall(f C.uintptr_t, elt C.uintptr_t, kind C.int) {
	defer recoverExport("ELT WithInfo hook", nil)
	fn := eltState.call.Load()
	info := eltState.callInfo.Load()
	if fn == nil || info == nil {
		return
	}
	c := ELTCall{Function: FunctionID(f), Kind: ELTKind(kind), info: info, elt: ELTInfo(elt)}
	(*fn)(&c)
}

// Frame returns the frame info of this call (for [Info.FunctionFullName]
// and generic instantiations); it needs ELTCallOptions.Frame.
func (c *ELTCall) Frame() (FrameInfo, error) {
	switch c.Kind {
	case ELTEnter:
		fr, _, err := c.enterInfo()
		return fr, err
	case ELTLeave:
		r, err := c.info.GetFunctionLeave3Info(c.Function, c.elt)
		return r.FrameInfo, err
	case ELTTailcall:
		return c.info.GetFunctionTailcall3Info(c.Function, c.elt)
	}
	return 0, fmt.Errorf("clrprof: ELTCall.Frame: kind %v", c.Kind)
}

// maxArgInfo bounds the argument description the runtime may ask for.
const maxArgInfo = 1 << 16

// Args returns the argument ranges of an enter call (the `this` pointer
// first for an instance method), each copied out of the frame. It needs
// ELTCallOptions.Args.
func (c *ELTCall) Args() ([]Arg, error) {
	if c.Kind != ELTEnter {
		return nil, fmt.Errorf("clrprof: ELTCall.Args: only on enter, not %v", c.Kind)
	}
	_, args, err := c.enterInfo()
	return args, err
}

// enterInfo calls GetFunctionEnter3Info twice: for the size, then for the
// frame and the ranges.
func (c *ELTCall) enterInfo() (FrameInfo, []Arg, error) {
	var size uint32
	fr, err := c.info.getFunctionEnter3Info(c.Function, c.elt, unsafe.Pointer(&size), nil)
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
	fr, err = c.info.getFunctionEnter3Info(c.Function, c.elt, unsafe.Pointer(&size), unsafe.Pointer(&buf[0]))
	if err != nil {
		return 0, nil, fmt.Errorf("clrprof: GetFunctionEnter3Info: %w", err)
	}
	ai := (*functionArgumentInfo)(unsafe.Pointer(&buf[0]))
	n := int(ai.NumRanges)
	rangeSize := int(unsafe.Sizeof(FunctionArgumentRange{}))
	off := int(unsafe.Offsetof(ai.Ranges))
	if n < 0 || off+n*rangeSize > len(buf)*8 {
		return 0, nil, fmt.Errorf("clrprof: GetFunctionEnter3Info: %d ranges do not fit %d bytes", n, size)
	}
	if n == 0 {
		return fr, nil, nil
	}
	ranges := unsafe.Slice((*FunctionArgumentRange)(unsafe.Pointer(&ai.Ranges[0])), n)
	args := make([]Arg, 0, n)
	for _, r := range ranges {
		args = append(args, readArg(r))
	}
	return fr, args, nil
}

// Return returns the return value range of a leave call (empty for a void
// method). It needs ELTCallOptions.Return.
func (c *ELTCall) Return() (Arg, error) {
	if c.Kind != ELTLeave {
		return Arg{}, fmt.Errorf("clrprof: ELTCall.Return: only on leave, not %v", c.Kind)
	}
	r, err := c.info.GetFunctionLeave3Info(c.Function, c.elt)
	if err != nil {
		return Arg{}, fmt.Errorf("clrprof: GetFunctionLeave3Info: %w", err)
	}
	return readArg(r.RetValRange), nil
}

// maxArgBytes bounds one copied range.
const maxArgBytes = 1 << 20

func readArg(r FunctionArgumentRange) Arg {
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
	Addr Address
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
func (a Arg) Object() (ObjectID, error) {
	b, err := a.fixed(8, "object reference")
	if err != nil {
		return 0, err
	}
	return ObjectID(binary.LittleEndian.Uint64(b)), nil
}
