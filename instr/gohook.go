//go:build cgo

package instr

/*
#cgo CFLAGS: -I${SRCDIR}/../internal/include -Wall -Wextra -Wno-unused-parameter -Wno-unused-function
#include <stdint.h>
#include <stddef.h>

void *clrprof_gohook_act_alloc(size_t n);
// gohook_act.go's block layout, which gohook.c reads.
#define CLRPROF_ACT_HEADER 8
#define CLRPROF_ACT_REC 80
#define CLRPROF_ACT_NAME 72
#define CLRPROF_ACT_NAME_MAX 512
*/
import "C"

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf16"
	"unsafe"

	_ "github.com/clrprof/clrprof/internal/sigguard" // gohook.c's guard (internal/include/guard.h)
)

// GoHooks are the entry and exit hooks of a Rule whose integration is
// written in Go. The wrapped method calls them through a P/Invoke the SDK
// defines in the method's own module (a MethodDef with its ImplMap naming
// an exported function of the profiler library, by the library's absolute
// path): no managed helper assembly is involved.
//
// There are two modes. By default (synchronous) the hooks run on the
// thread that called the method, in preemptive mode (as any P/Invoke: a
// garbage collection may run meanwhile), with the activation signal
// blocked like every other Go callback (see docs/reliability.md). They
// must return promptly: the method waits for them. An empty hook costs
// about 1 µs per call (the guard's two pthread_sigmask calls and the cgo
// callback): pick this mode when a hook must run inside the call (read the
// clock on the thread, see the call before the method's body runs).
//
// With Deferred the hooks observe instead: the call only leaves a record
// in a ring of its thread (in C: no Go, no signal guard, no lock), and a
// goroutine runs the hooks later, in each thread's
// order, Exit's State paired with its Enter's result as in the other mode.
// They cannot influence the call, run after it (within DeferredPoll plus
// the time earlier hooks take), and under overload (a thread making calls
// faster than the hooks run) calls are dropped whole and counted
// (DeferredStats), never blocking the app. Pick this mode for tracing and
// counting on hot paths; use Timestamps to get the calls' times. See
// docs/instrumentation.md for measured costs.
//
// In both modes a hook that panics is recovered (and counted, see
// GoHookPanics); the method goes on. Synchronous hooks of many threads run
// at once; deferred hooks run one at a time.
type GoHooks struct {
	// Enter, when set, runs before the method's body. What it returns
	// is handed to Exit as Return.State. c is valid only until Enter
	// returns (the deferred drain reuses it for the next call): keep
	// what you need from it (c.Args() itself may be kept), not c.
	Enter func(c *Call) uint64
	// Exit, when set, runs when the method returns or an exception
	// leaves it; for a method declared to return a task (Task, Task<T>,
	// ValueTask, ValueTask<T>), when the task completes, on the thread
	// that completes it (Return.Async), unless Rule.EndAtReturn. r is
	// valid only until Exit returns, as Enter's c.
	Exit func(r *Return)
	// Args makes Enter receive the method's arguments (the first
	// MaxGoArgs of them); without it Call.Args is nil and the call costs
	// the same whatever the method's parameters.
	Args bool
	// Deferred makes the hooks observe the calls instead of running in
	// them: the wrapped method only appends a record of the call (its
	// arguments, strings copied, and at exit its return value and
	// exception) to a ring of its thread, in C, without calling Go or
	// blocking a signal, and a goroutine of the SDK runs Enter and Exit
	// later (within DeferredPoll plus the time the hooks before take), in
	// each thread's order, with Return.State paired with its Enter as in
	// the synchronous mode. Call.Thread is the calling thread. The hooks
	// cannot influence the call and run after it; a copied string is cut
	// at 1024 UTF-16 units (Value.Truncated). When a thread's ring is full
	// (DeferredRingSize, SetDeferredRingSize) the call is dropped, neither
	// Enter nor Exit runs for it, and DeferredStats counts it. Call
	// FlushDeferred at Shutdown. Runtime-async methods and methods
	// declared to return a task (without Rule.EndAtReturn) get the
	// synchronous entries instead: their exit runs on another thread than
	// their entry, which a thread's ring cannot pair.
	Deferred bool
	// Timestamps, with Deferred, records the time of the entry and of the
	// exit (Call.Time, Return.Time), so that the hooks can build spans
	// after the fact. Without it the clock is not read (Time is zero).
	Timestamps bool
	// Members are members of arguments or of the value returned that the
	// hooks receive (Call.Member, Return.Member, by their index here),
	// read by IL the SDK generates in the wrap: see Member. A member that
	// cannot be resolved when the method is wrapped leaves the method
	// unwrapped, with the reason in Instrumenter.Report.
	Members []Member
	// Actions are methods that Enter may ask the wrap to call, on
	// arguments or their members, with values it gives (Call.Act), right
	// after it returns: to set a request's header, say; and, marked
	// AtExit, methods that Exit may ask for (Return.Act), run right after
	// it returns, on the arguments or the value returned. See Action.
	// Only synchronous hooks can act: New refuses Actions with Deferred.
	Actions []Action
}

// Result is Member.Arg for a member of the value the method returns.
const Result = -1

// This is Member.Arg for a member of the instance (this) of an instance
// method of a class (not a struct, not a generic type), read at entry.
const This = -2

// Static is Member.Arg for a member read, at entry, from a static
// property or field of the type Member.Type names: the first name of
// Path is the static member, the others instance members of its value.
// CurrentActivity is one.
const Static = -3

// ActivityType is the Member.Type of System.Diagnostics.Activity, whose
// static Current is the caller's ambient activity (it lives in an
// AsyncLocal, so it follows the logical call across awaits and threads).
const ActivityType = "System.Diagnostics.Activity, System.Diagnostics.DiagnosticSource"

// CurrentActivity returns the member that reads path of the caller's
// current activity (Activity.Current) at entry: "Id" is its W3C
// traceparent ("00-{trace id}-{span id}-{flags}", when the activity uses
// the W3C format: the default from .NET 5 on; the hierarchical format of
// earlier runtimes, "|{root}.{n}.", is not one, and
// tracecontext.ParseTraceparent refuses it), "TraceStateString" its
// tracestate ("" reads the activity itself, as its ToString()). A call
// with no current activity reads null. Reading "Id" fixes it: the
// activity makes the string once, with its trace flags of then, and
// propagates that string; a hook that may change the flags (an Action
// calling set_ActivityTraceFlags) reads "TraceId", "SpanId" and
// "Recorded" instead, as sample/gotrace does.
func CurrentActivity(path string) Member {
	if path == "" {
		return Member{Arg: Static, Type: ActivityType, Path: "Current"}
	}
	return Member{Arg: Static, Type: ActivityType, Path: "Current." + path}
}

// Member names a member that a Go hook receives: Path, a dotted list of
// property or field names (instance members of the declared type or its
// base types), read from argument Arg (0 for the first parameter; This for
// the instance) at entry, or with Arg Result from the value returned at
// exit (a task's result when Exit runs at the task's completion), or, with
// Arg Static, from a static member of the type Type names. The wrap loads
// the argument, and for each name calls the property's getter (callvirt)
// or loads the field, after checking that the object is not null. The
// value is passed as an argument of its kind would be (strings copied, cut
// at 1024 units in deferred mode; numbers, bool, char and the module's
// enums as their bits); a value of another type (an object, a struct, an
// enum of another module) is passed as its ToString() (KindString, Type
// naming the member's type). A null on the way, or a getter that throws,
// makes the value null (Value.IsNull; Threw tells the second, which
// GoMemberErrors counts): the exception never reaches the app.
//
// The types are resolved when the method is wrapped, each where it is
// defined: the method's module, or another loaded module (type forwarders
// followed). Members of the method's module may be public or internal;
// those of other assemblies must be public members of public types (the
// JIT checks access across assemblies). Every type on the path but the last
// member's own must be a class (not a generic instantiation, not a
// struct). A member that does not resolve so is an error
// (Instrumenter.Report), and its method is left unwrapped. An entry passes
// the arguments (with GoHooks.Args) and the argument and static members,
// and one word more, in at most MaxGoArgs values; an exit passes at most
// MaxGoResultMembers members.
type Member struct {
	Arg  int
	Path string
	// Type names the type of a Static member, "Namespace.Name, Assembly"
	// (ActivityType, say), found in the loaded modules of the assembly, or
	// when none is loaded yet in the framework's file of that name; with no
	// assembly, in the method's module.
	Type string
	// Optional makes a member that does not resolve read null (IsNull)
	// instead of leaving the method unwrapped; Report.Absent names it,
	// with the reason. For what a hook can do without (the current
	// activity, in an app whose framework may lack DiagnosticSource).
	Optional bool
}

// MaxGoResultMembers is the number of Result members a GoHooks may have.
const MaxGoResultMembers = 4

// MaxGoArgs is the number of arguments a Go hook can receive: a method
// with more parameters passes the first MaxGoArgs.
const MaxGoArgs = 8

// Call is what an Enter hook receives: a view of the call, read through
// its methods. The hooks cannot change what it says of the call, so the
// deferred drain can hand the same Call to every call of a thread and
// write only what differs from the call before (a hook that could write
// into it would make the drain reset every field before every call, which
// was most of an empty deferred hook's cost). The one thing a hook adds
// to it is the actions it asks for (Act), which a deferred Call refuses.
type Call struct {
	method  int32
	thread  uint64
	args    []Value
	time    time.Time
	members []Value // by GoHooks.Members' index: the argument members
	// The actions the hooks have (GoHooks.Actions, synchronous entries
	// only: nil in the deferred drain) and those Enter asked for (Act).
	actions  []Action
	acts     []ActionRequest
	actBytes int
}

// Member is the value of GoHooks.Members[i] when it names a member of an
// argument (Arg >= 0); otherwise (or out of range) a Value of KindVoid.
func (c *Call) Member(i int) Value {
	if i < 0 || i >= len(c.members) {
		return Value{}
	}
	return c.members[i]
}

// Method is the instrumented method's id (Instrumenter.Method).
func (c *Call) Method() int32 { return c.method }

// Thread is the OS thread id (gettid) of the calling thread.
func (c *Call) Thread() uint64 { return c.thread }

// Args are the arguments with GoHooks.Args (this is not among them), nil
// otherwise. The slice is the call's own: the hook may keep it.
func (c *Call) Args() []Value { return c.args }

// Time is when the method was entered, with GoHooks.Deferred and
// GoHooks.Timestamps (read from CLOCK_MONOTONIC in the call, made a
// wall-clock time by the offset between the two clocks when the first
// deferred rule was added); zero otherwise.
func (c *Call) Time() time.Time { return c.time }

// Return is what an Exit hook receives: a read-only view of the return,
// as Call is of the call.
type Return struct {
	method   int32
	thread   uint64
	state    uint64
	value    Value
	exc      bool
	excType  string
	excTrunc bool
	async    bool
	canceled bool
	time     time.Time
	members  *[]Value // by GoHooks.Members' index: the result members
	// The hooks' actions (nil: none), and those at exit that Exit asked
	// for, made by its first Return.Act: pointers keep a Return
	// comparable, and an Exit that does not act allocates nothing.
	actions *[]Action
	act     *returnActs
}

// returnActs are the actions an Exit asked for (Return.Act).
type returnActs struct {
	acts     []ActionRequest
	actBytes int
}

// Member is the value of GoHooks.Members[i] when it names a member of the
// value returned (Arg Result), read at exit (null when an exception is
// leaving); otherwise (or out of range) a Value of KindVoid.
func (r *Return) Member(i int) Value {
	if r.members == nil || i < 0 || i >= len(*r.members) {
		return Value{}
	}
	return (*r.members)[i]
}

// Method is the instrumented method's id (Instrumenter.Method).
func (r *Return) Method() int32 { return r.method }

// Thread is the OS thread id (gettid) of the calling thread.
func (r *Return) Thread() uint64 { return r.thread }

// State is what Enter returned (0 without Enter, or if it panicked).
func (r *Return) State() uint64 { return r.state }

// Value is the value returned (KindVoid for a void method; the type's
// default when an exception is leaving).
func (r *Return) Value() Value { return r.value }

// Exception tells whether an exception is leaving the method.
func (r *Return) Exception() bool { return r.exc }

// ExceptionType is the type's name of the exception leaving the method
// ("System.InvalidOperationException"), "" without one.
func (r *Return) ExceptionType() string { return r.excType }

// ExceptionTypeTruncated tells, with GoHooks.Deferred, that ExceptionType
// was cut short (as Value.Truncated).
func (r *Return) ExceptionTypeTruncated() bool { return r.excTrunc }

// Time is when the method returned, as Call.Time.
func (r *Return) Time() time.Time { return r.time }

// Async tells that Exit runs at the completion of the task the method
// returned (a target declared to return Task, Task<T>, ValueTask or
// ValueTask<T>, without Rule.EndAtReturn), not at its return: Value is
// then the task's result (KindVoid for Task and ValueTask; KindObject
// without a value when T is a generic parameter), Exception the
// exception the task faulted with, and Thread the thread that completed
// it. The task itself (the method's return) is a reference, not passed.
func (r *Return) Async() bool { return r.async }

// Canceled tells, with Async, that the task was cancelled: Exception is
// then true with ExceptionType "System.Threading.Tasks.TaskCanceledException".
func (r *Return) Canceled() bool { return r.canceled }

// Kind is the kind of a Value.
type Kind uint8

// The kinds of values a Go hook receives. References other than strings
// (this, objects, arrays, boxed values) are not passed: the GC may move
// them, and a hook has no safe way to read them; they arrive as
// KindObject without a value. By-ref parameters pass the value they
// point at.
const (
	KindVoid   Kind = iota // no value: a void method's return
	KindInt                // sbyte, short, int, long, nint
	KindUint               // byte, ushort, uint, ulong, nuint
	KindFloat              // float, double
	KindBool               // bool
	KindChar               // char
	KindString             // string (copied; IsNull for null)
	KindEnum               // an enum defined in the method's module: Int (or Uint) and EnumType
	KindObject             // any other reference, a struct, a pointer: not passed
)

var kindNames = [...]string{"void", "int", "uint", "float", "bool", "char", "string", "enum", "object"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Value is an argument or return value handed to a Go hook.
type Value struct {
	Kind Kind
	// Type is the parameter's type as a target's parameter list spells
	// it (System.Int32, Shop.Color, System.String).
	Type     string
	bits     uint64
	str      string
	null     bool
	trunc    bool
	unsigned bool // an enum with an unsigned underlying type
	threw    bool // a member's getter threw
}

// Threw tells a member (GoHooks.Members) whose reading threw an exception
// (a getter on its path): the value is then null.
func (v Value) Threw() bool { return v.threw }

// Truncated tells a KindString value of a deferred hook (GoHooks.Deferred)
// cut short: the string had more than 1024 UTF-16 units (Str holds the
// first 1024), or, for a return value, its thread's ring had no room left
// for all of it. Synchronous hooks always get the whole string.
func (v Value) Truncated() bool { return v.trunc }

// Int is the value of a KindInt or KindEnum value (a KindUint value
// converted).
func (v Value) Int() int64 { return int64(v.bits) }

// Uint is the value of a KindUint value.
func (v Value) Uint() uint64 { return v.bits }

// Float is the value of a KindFloat value.
func (v Value) Float() float64 { return math.Float64frombits(v.bits) }

// Bool is the value of a KindBool value.
func (v Value) Bool() bool { return v.bits != 0 }

// Char is the value of a KindChar value (a UTF-16 code unit).
func (v Value) Char() rune { return rune(uint16(v.bits)) }

// Str is the value of a KindString value ("" for null: see IsNull).
func (v Value) Str() string { return v.str }

// IsNull tells a null string, or a member (GoHooks.Members) that could
// not be read: an object on its path was null, or a getter threw.
func (v Value) IsNull() bool { return v.null }

// String formats the value: 42, 1.5, true, 'c' as "c", strings quoted,
// null, enums as their number, <object> for what is not passed.
func (v Value) String() string {
	if v.null {
		return "null"
	}
	switch v.Kind {
	case KindVoid:
		return "void"
	case KindInt:
		return fmt.Sprint(v.Int())
	case KindUint:
		return fmt.Sprint(v.Uint())
	case KindEnum:
		if v.unsigned {
			return fmt.Sprint(v.Uint())
		}
		return fmt.Sprint(v.Int())
	case KindFloat:
		return fmt.Sprint(v.Float())
	case KindBool:
		return fmt.Sprint(v.Bool())
	case KindChar:
		return fmt.Sprintf("%q", v.Char())
	case KindString:
		return fmt.Sprintf("%q", v.str)
	}
	return "<object>"
}

// valueKind is how the wrap passes one value: the kind and, for the IL,
// how to widen it to 64 bits.
type valueKind struct {
	kind     Kind
	typ      string
	unsigned bool // widen with conv.u8
	single   bool // a float32, widened to double
}

// bitsMask is the mask of the 64 bits passed for a value of kind k that a
// Value keeps: all of them for numbers, bool, char and enums; none for a
// string (passed as a reference, copied), an object or void.
func (k *valueKind) bitsMask() uint64 {
	switch k.kind {
	case KindString, KindObject, KindVoid:
		return 0
	}
	return ^uint64(0)
}

// goEntry is a method wrapped with Go hooks; the P/Invoke passes its
// index in goTable.
type goEntry struct {
	hooks  *GoHooks
	method int32
	name   string
	args   []valueKind
	ret    valueKind
	// stamp: a Deferred rule with Timestamps on a runtime-async method,
	// which is delivered synchronously: Call.Time and Return.Time are
	// read here.
	stamp bool
	// The members (GoHooks.Members): those of arguments, passed to Enter
	// after the arguments and followed by their status word, and those of
	// the value returned, passed to the exit entry with theirs.
	inMem  []memberSlot
	outMem []memberSlot
	nmem   int // len(GoHooks.Members)

	memberThrew atomic.Int64
	actThrew    []atomic.Int64           // by GoHooks.Actions' index
	actFirst    []atomic.Pointer[string] // the type of the first exception each threw
	panics      atomic.Int64
	firstPanic  atomic.Pointer[string]
}

var (
	goMu    sync.Mutex
	goTable atomic.Pointer[[]*goEntry] // copy on write: read without a lock
)

func addGoEntry(e *goEntry) int32 {
	goMu.Lock()
	defer goMu.Unlock()
	var tab []*goEntry
	if p := goTable.Load(); p != nil {
		tab = *p
	}
	n := make([]*goEntry, len(tab), len(tab)+1)
	copy(n, tab)
	n = append(n, e)
	goTable.Store(&n)
	return int32(len(n) - 1)
}

func goLookup(id int32) *goEntry {
	p := goTable.Load()
	if p == nil || id < 0 || int(id) >= len(*p) {
		return nil
	}
	return (*p)[id]
}

// memberSlot is one member passed: its index in GoHooks.Members and how
// its value is passed.
type memberSlot struct {
	index int
	kind  valueKind
}

// The status word passed after the members: bit j, the j-th member passed
// is null (an object on its path was null, or a getter threw); bit 32+j,
// a getter threw.
const memberThrewShift = 32

// memberValues returns the values of the members of slots by their index
// in GoHooks.Members (the others KindVoid), get decoding the value of the
// j-th slot when its status says it was read.
func (e *goEntry) memberValues(slots []memberSlot, status uint64, get func(j int, k *valueKind) Value) []Value {
	out := make([]Value, e.nmem)
	for j := range slots {
		s := &slots[j]
		if status&(1<<j) == 0 {
			out[s.index] = get(j, &s.kind)
			continue
		}
		threw := status&(1<<(memberThrewShift+j)) != 0
		if threw {
			e.memberThrew.Add(1)
		}
		out[s.index] = NullMemberValue(s.kind.kind, s.kind.typ, threw)
	}
	return out
}

// MemberError counts the readings of a method's members
// (GoHooks.Members) that threw.
type MemberError struct {
	Method string // in target syntax
	Count  int64
}

// GoMemberErrors returns the methods whose members' readings threw (every
// Instrumenter of the process), with how often: counted as the hooks'
// calls are delivered (a deferred call that was dropped is not counted).
func GoMemberErrors() []MemberError {
	p := goTable.Load()
	if p == nil {
		return nil
	}
	var out []MemberError
	for _, e := range *p {
		if n := e.memberThrew.Load(); n > 0 {
			out = append(out, MemberError{Method: e.name, Count: n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Method < out[j].Method })
	return out
}

// HookPanic is a method whose Go hook panicked.
type HookPanic struct {
	Method string // in target syntax
	Count  int64
	First  string // the first panic's value
}

// GoHookPanics returns the methods whose Go hooks panicked (every
// Instrumenter of the process), with how often and the first panic.
func GoHookPanics() []HookPanic {
	p := goTable.Load()
	if p == nil {
		return nil
	}
	var out []HookPanic
	for _, e := range *p {
		if n := e.panics.Load(); n > 0 {
			hp := HookPanic{Method: e.name, Count: n}
			if f := e.firstPanic.Load(); f != nil {
				hp.First = *f
			}
			out = append(out, hp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Method < out[j].Method })
	return out
}

func (e *goEntry) recovered(r any) {
	e.panics.Add(1)
	s := fmt.Sprint(r)
	e.firstPanic.CompareAndSwap(nil, &s)
}

func decode(k valueKind, bits uint64) Value {
	v := Value{Kind: k.kind, Type: k.typ, bits: bits & k.bitsMask(), unsigned: k.unsigned}
	if k.kind == KindString {
		if bits == 0 {
			v.null = true
		} else {
			v.str = readString(uintptr(bits))
		}
	}
	return v
}

// readString copies a pinned System.String: on 64-bit CoreCLR (every
// version) its length (int32) follows the MethodTable pointer at offset 8
// and its UTF-16 characters start at offset 12
// (RuntimeHelpers.OffsetToStringData).
func readString(p uintptr) string {
	// The address is of managed memory, not Go's: go vet's unsafe.Pointer
	// rule (a uintptr must come from a Go pointer in the same expression)
	// has nothing to protect here.
	obj := *(*unsafe.Pointer)(unsafe.Pointer(&p))
	n := *(*int32)(unsafe.Add(obj, 8))
	if n <= 0 {
		return ""
	}
	chars := unsafe.Slice((*uint16)(unsafe.Add(obj, 12)), n)
	return string(utf16.Decode(chars))
}

//export clrprofGoEnter
func clrprofGoEnter(id C.int32_t, tid C.uint64_t, n C.int32_t, a *C.int64_t) (state C.int64_t) {
	e := goLookup(int32(id))
	if e == nil || e.hooks.Enter == nil {
		return 0
	}
	defer func() {
		if r := recover(); r != nil {
			e.recovered(r)
			state = 0
		}
	}()
	c := Call{method: e.method, thread: uint64(tid), actions: e.hooks.Actions}
	if e.stamp {
		c.time = time.Now()
	}
	if n > 0 && a != nil {
		raw := unsafe.Slice((*uint64)(unsafe.Pointer(a)), int(n))
		na := min(len(e.args), len(raw))
		if na > 0 {
			c.args = make([]Value, na)
			for i, b := range raw[:na] {
				c.args[i] = decode(e.args[i], b)
			}
		}
		if m := raw[na:]; len(e.inMem) > 0 && len(m) == len(e.inMem)+1 {
			c.members = e.memberValues(e.inMem, m[len(e.inMem)], func(j int, k *valueKind) Value { return decode(*k, m[j]) })
		}
	}
	state = C.int64_t(e.hooks.Enter(&c))
	if len(c.acts) > 0 {
		postActs(id, c.acts)
	}
	return state
}

// The block's layout is the same in C and Go: a difference does not
// compile (a negative constant converted to uint).
const (
	_ = uint(actRecSize-C.CLRPROF_ACT_REC) + uint(C.CLRPROF_ACT_REC-actRecSize)
	_ = uint(actHeader-C.CLRPROF_ACT_HEADER) + uint(C.CLRPROF_ACT_HEADER-actHeader)
)

// postActs leaves the block of a call's actions for the wrap, which takes
// it (clrprof_gohook_act_take) right after Enter returns, on this thread.
func postActs(id C.int32_t, acts []ActionRequest) {
	n := actBlockSize(acts)
	p := C.clrprof_gohook_act_alloc(C.size_t(n))
	if p == nil {
		return
	}
	fillActBlock(unsafe.Slice((*byte)(p), n), uintptr(p), int32(id), acts)
}

// gohook.c reads the block by the preamble's layout: the same as
// gohook_act.go's, or this does not compile.
var (
	_ [C.CLRPROF_ACT_REC - actRecSize]struct{}
	_ [actRecSize - C.CLRPROF_ACT_REC]struct{}
	_ [C.CLRPROF_ACT_NAME - (8 + 16*MaxActionParams)]struct{}
	_ [(8 + 16*MaxActionParams) - C.CLRPROF_ACT_NAME]struct{}
	_ [C.CLRPROF_ACT_HEADER - actHeader]struct{}
	_ [actHeader - C.CLRPROF_ACT_HEADER]struct{}
)

//export clrprofGoActThrew
func clrprofGoActThrew(id, action C.int32_t, name unsafe.Pointer) {
	e := goLookup(int32(id))
	if e == nil || action < 0 || int(action) >= len(e.actThrew) {
		return
	}
	e.actThrew[action].Add(1)
	if name != nil && e.actFirst[action].Load() == nil {
		// gohook.c's copy: an int32 count, then the UTF-16 units.
		n := *(*int32)(name)
		s := string(utf16.Decode(unsafe.Slice((*uint16)(unsafe.Add(name, 4)), n)))
		e.actFirst[action].CompareAndSwap(nil, &s)
	}
}

// GoActionErrors returns the actions (GoHooks.Actions) that threw, by
// method (every Instrumenter of the process) and action, with how often
// and the type of the first exception.
func GoActionErrors() []ActionError {
	p := goTable.Load()
	if p == nil {
		return nil
	}
	var out []ActionError
	for _, e := range *p {
		for i := range e.actThrew {
			if n := e.actThrew[i].Load(); n > 0 {
				ae := ActionError{Method: e.name, Action: i, Count: n}
				if f := e.actFirst[i].Load(); f != nil {
					ae.First = *f
				}
				out = append(out, ae)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Method != out[j].Method {
			return out[i].Method < out[j].Method
		}
		return out[i].Action < out[j].Action
	})
	return out
}

//export clrprofGoExit
func clrprofGoExit(id C.int32_t, tid C.uint64_t, state, ret, exc, typ C.int64_t) {
	goExit(id, tid, state, ret, exc, typ, nil)
}

// clrprofGoExitM is clrprofGoExit with the result members: a[0] their
// status word, a[1:1+MaxGoResultMembers] their values.
//
//export clrprofGoExitM
func clrprofGoExitM(id C.int32_t, tid C.uint64_t, state, ret, exc, typ C.int64_t, a *C.int64_t) {
	goExit(id, tid, state, ret, exc, typ, unsafe.Slice((*uint64)(unsafe.Pointer(a)), 1+MaxGoResultMembers))
}

func goExit(id C.int32_t, tid C.uint64_t, state, ret, exc, typ C.int64_t, mem []uint64) {
	e := goLookup(int32(id))
	if e == nil || e.hooks.Exit == nil {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			e.recovered(r)
		}
	}()
	r := Return{method: e.method, thread: uint64(tid), state: uint64(state), value: decode(e.ret, uint64(ret))}
	if len(e.hooks.Actions) > 0 {
		r.actions = &e.hooks.Actions
	}
	if e.stamp {
		r.time = time.Now()
	}
	r.async, r.canceled = exc&exitAsync != 0, exc&exitCanceled != 0
	if exc&1 != 0 {
		r.exc = true
		if typ != 0 {
			r.excType = readString(uintptr(typ))
		}
	}
	if len(e.outMem) > 0 && len(mem) > len(e.outMem) {
		vals := e.memberValues(e.outMem, mem[0], func(j int, k *valueKind) Value { return decode(*k, mem[1+j]) })
		r.members = &vals
	}
	e.hooks.Exit(&r)
	if r.act != nil && len(r.act.acts) > 0 {
		// Taken by the wrap's exit code right after this returns.
		postActs(id, r.act.acts)
	}
}
