package instr

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"unicode/utf16"
)

// Action is a method that a synchronous Enter hook may ask the wrap to
// call (Call.Act) right after it returns, before the method's body runs:
// on the object reached from argument Arg (0 for the first parameter;
// This for the instance; Static for a static property or field of Type,
// the first name of Path) through Path (a dotted list of property or
// field names, resolved as Member's; "" for the argument itself), the
// instance method named Method that takes exactly Params parameters, all
// strings (at most MaxActionParams), or, when Kinds is set, parameters of
// those kinds (strings, booleans, integers, enums, floats), with the
// values Enter gave. Its result, if any, is
// dropped. It is how a Go integration sets a header for propagation
// without C#:
//
//	Action{Arg: 0, Path: "Headers", Method: "TryAddWithoutValidation", Params: 2}
//
// on HttpMessageInvoker.SendAsync(HttpRequestMessage, CancellationToken),
// or marks the caller's current activity recorded (a property's setter is
// the method set_Name):
//
//	Action{Arg: Static, Type: "System.Diagnostics.Activity, System.Diagnostics.DiagnosticSource",
//		Path: "Current", Method: "set_ActivityTraceFlags", Kinds: []ParamKind{ParamInt32}}
//
// The method is resolved when the target is wrapped, on the class the
// path ends at or its base types, in whatever loaded module defines each
// (public, or internal in the target's module; not static, not generic);
// callvirt dispatches to an override. One that does not resolve leaves
// the target unwrapped, with the reason in Instrumenter.Report, unless
// the action is Optional: then the target is wrapped without it (the
// reason in Report's Absent) and asking for it does nothing. An action
// runs only on the calls whose Enter asked for it, in the order asked,
// each under a filter that accepts every exception: an action that throws
// stops there, is counted (GoActionErrors) and the call goes on; a null
// object on the path skips it. Deferred hooks cannot act (their Enter runs
// after the call): a rule with both is refused by New.
//
// With AtExit the action belongs to Exit instead: Exit asks for it
// (Return.Act), and the wrap runs it right after Exit returns, at the
// method's return (or as an exception leaves it), on its arguments, this,
// a static member, or, with Arg Result, the value it returned (null, so
// skipped, when an exception is leaving): to set a header on a response
// the method made, say. A method whose Exit runs when the task it returns
// completes (see GoHooks.Exit) cannot have actions at exit, since its
// arguments are gone by then: set Rule.EndAtReturn, and Result is the task
// (a non-generic Task: not a Task<T>, a generic instantiation).
type Action struct {
	Arg    int
	Type   string // with Arg Static: the type, as Member.Type
	Path   string
	Method string
	Params int
	// AtExit makes the action Exit's (Return.Act) rather than Enter's.
	AtExit bool
	// Kinds, when set, are the kinds of the method's parameters, in
	// order (Params is then 0 or len(Kinds)); nil: Params strings.
	Kinds []ParamKind
	// Optional: a method that does not resolve leaves this action out,
	// not the target unwrapped.
	Optional bool
}

// ParamKind is the kind of an Action's parameter and of the Go value
// Call.Act takes for it.
type ParamKind uint8

const (
	// ParamString is a string parameter: a Go string.
	ParamString ParamKind = iota
	// ParamBool is a bool parameter: a Go bool.
	ParamBool
	// ParamInt32 is an int32 parameter, or an enum's whose underlying
	// type is int32: any Go integer in int32's range.
	ParamInt32
	// ParamInt64 is an int64 parameter, or an enum's whose underlying
	// type is int64: any Go integer in int64's range.
	ParamInt64
	// ParamFloat64 is a double parameter: a Go float64 or float32.
	ParamFloat64
	// ParamFloat32 is a float parameter: a Go float32, or a float64
	// (rounded to the nearest float32, as a conversion does).
	ParamFloat32
)

func (k ParamKind) String() string {
	switch k {
	case ParamString:
		return "string"
	case ParamBool:
		return "bool"
	case ParamInt32:
		return "int32"
	case ParamInt64:
		return "int64"
	case ParamFloat64:
		return "float64"
	case ParamFloat32:
		return "float32"
	}
	return fmt.Sprintf("ParamKind(%d)", uint8(k))
}

// kinds returns the kinds of a's parameters.
func (a *Action) kinds() []ParamKind {
	if a.Kinds != nil {
		return a.Kinds
	}
	return make([]ParamKind, a.Params)
}

// MaxActionParams is the number of parameters an Action's method may take.
const MaxActionParams = 4

// MaxActs is the number of actions one Enter may ask for (Call.Act).
const MaxActs = 64

// maxActBytes bounds the bytes (UTF-8) of the strings one call's actions
// carry: their UTF-16 copies in the block take at most 1 MiB.
const maxActBytes = 1 << 19

// ActionRequest is an action an Enter hook asked for: GoHooks.Actions'
// index and the values passed to its method, each a string or an int64
// (a bool is 0 or 1).
type ActionRequest struct {
	Action int
	Args   []any
}

// Act asks the wrap to run GoHooks.Actions[i] with args (as many as its
// parameters, each of its kind: a string, a bool, or a Go integer in the
// parameter's range) once Enter returns; actions asked for several times
// run as many times, in the order asked. It returns an error, and asks for
// nothing, when i is not an index of GoHooks.Actions (a deferred hook has
// none), when args do not match the action's parameters, or beyond
// MaxActs actions or 512 KiB of strings a call. If Enter panics, nothing
// it asked for runs.
func (c *Call) Act(i int, args ...any) error {
	return ask(c.actions, &c.acts, &c.actBytes, false, i, args)
}

// Act asks the wrap to run GoHooks.Actions[i], an action at exit
// (Action.AtExit), with args once Exit returns, as Call.Act does for
// Enter's. It returns an error, and asks for nothing, when i is not an
// action at exit, for args that do not match, or beyond MaxActs actions or
// 512 KiB of strings. If Exit panics, nothing it asked for runs.
func (r *Return) Act(i int, args ...any) error {
	var actions []Action
	if r.actions != nil {
		actions = *r.actions
	}
	if r.act == nil {
		r.act = &returnActs{}
	}
	return ask(actions, &r.act.acts, &r.act.actBytes, true, i, args)
}

// Actions are the actions at exit Exit asked for (Return.Act), in order:
// for a hook's unit tests (NewReturn, with ReturnFields.Actions).
func (r *Return) Actions() []ActionRequest {
	if r.act == nil {
		return nil
	}
	return r.act.acts
}

// ask checks a request for actions[i] with args and appends it to acts:
// Call.Act (atExit false) and Return.Act.
func ask(actions []Action, acts *[]ActionRequest, actBytes *int, atExit bool, i int, args []any) error {
	who := "Act"
	if atExit {
		who = "Return.Act"
	}
	if i < 0 || i >= len(actions) {
		return fmt.Errorf("instr: %s(%d): the hooks have %d actions", who, i, len(actions))
	}
	a := &actions[i]
	switch {
	case a.AtExit && !atExit:
		return fmt.Errorf("instr: Act(%d): %s runs at exit (Action.AtExit): Exit asks for it, with Return.Act", i, a.Method)
	case !a.AtExit && atExit:
		return fmt.Errorf("instr: Return.Act(%d): %s runs at entry: Enter asks for it, with Call.Act", i, a.Method)
	}
	kinds := a.kinds()
	if len(args) != len(kinds) {
		return fmt.Errorf("instr: %s(%d): %d values for %s, which takes %d", who, i, len(args), a.Method, len(kinds))
	}
	if len(*acts) >= MaxActs {
		return fmt.Errorf("instr: %s(%d): more than %d actions in one call", who, i, MaxActs)
	}
	vals := make([]any, len(args))
	n := 0
	for j, v := range args {
		w, err := actValue(kinds[j], v)
		if err != nil {
			return fmt.Errorf("instr: %s(%d): parameter %d of %s: %w", who, i, j, a.Method, err)
		}
		if s, ok := w.(string); ok {
			n += len(s)
		}
		vals[j] = w
	}
	if *actBytes+n > maxActBytes {
		return fmt.Errorf("instr: %s(%d): more than %d bytes of strings in one call", who, i, maxActBytes)
	}
	*actBytes += n
	*acts = append(*acts, ActionRequest{Action: i, Args: vals})
	return nil
}

// actValue checks v against kind k and returns what the block holds: a
// string, or an int64 (a float's IEEE bits: a float32's in the low half).
func actValue(k ParamKind, v any) (any, error) {
	switch k {
	case ParamFloat64, ParamFloat32:
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case float32:
			f = float64(x)
		default:
			return nil, fmt.Errorf("%T for a %s", v, k)
		}
		if k == ParamFloat32 {
			return int64(math.Float32bits(float32(f))), nil
		}
		return int64(math.Float64bits(f)), nil
	case ParamString:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case ParamBool:
		if b, ok := v.(bool); ok {
			if b {
				return int64(1), nil
			}
			return int64(0), nil
		}
	case ParamInt32, ParamInt64:
		rv := reflect.ValueOf(v)
		var x int64
		switch rv.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			x = rv.Int()
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			u := rv.Uint()
			if u > math.MaxInt64 {
				return nil, fmt.Errorf("%d is out of %s's range", u, k)
			}
			x = int64(u)
		default:
			return nil, fmt.Errorf("%T for a %s", v, k)
		}
		if k == ParamInt32 && (x < math.MinInt32 || x > math.MaxInt32) {
			return nil, fmt.Errorf("%d is out of %s's range", x, k)
		}
		return x, nil
	}
	return nil, fmt.Errorf("%T for a %s", v, k)
}

// Actions are the actions Enter asked for (Act), in order: for a hook's
// unit tests (NewCall, with CallFields.Actions).
func (c *Call) Actions() []ActionRequest { return c.acts }

// ActionError counts the runs of a method's action (GoHooks.Actions) that
// threw.
type ActionError struct {
	Method string // the target, in target syntax
	Action int    // the index in GoHooks.Actions
	Count  int64
	First  string // the full name of the first exception's type (at most 512 units)
}

// checkActions checks a rule's actions when the rule is added.
func checkActions(h *GoHooks) error {
	if len(h.Actions) == 0 {
		return nil
	}
	if h.Deferred {
		return fmt.Errorf("instr: GoHooks.Actions need synchronous hooks: a Deferred Enter runs after the call, too late to act on it")
	}
	for i, a := range h.Actions {
		switch {
		case !a.AtExit && h.Enter == nil:
			return fmt.Errorf("instr: action %d: an action at entry needs Enter, which asks for it", i)
		case a.AtExit && h.Exit == nil:
			return fmt.Errorf("instr: action %d: an action at exit (AtExit) needs Exit, which asks for it", i)
		case a.Arg == Result && !a.AtExit:
			return fmt.Errorf("instr: action %d: Arg Result is for an action at exit (AtExit)", i)
		case a.Arg < 0 && a.Arg != This && a.Arg != Static && a.Arg != Result:
			return fmt.Errorf("instr: action %d: Arg %d: an argument's index, This, Static or (at exit) Result", i, a.Arg)
		case a.Arg == Static && (a.Type == "" || a.Path == ""):
			return fmt.Errorf("instr: action %d: Arg Static needs a Type and a Path", i)
		case a.Arg != Static && a.Type != "":
			return fmt.Errorf("instr: action %d: Type %q is for Arg Static", i, a.Type)
		case a.Method == "":
			return fmt.Errorf("instr: action %d: no Method", i)
		case a.Kinds != nil && a.Params != 0 && a.Params != len(a.Kinds):
			return fmt.Errorf("instr: action %d: Params %d and %d Kinds", i, a.Params, len(a.Kinds))
		case a.Params < 0 || a.Params > MaxActionParams || len(a.Kinds) > MaxActionParams:
			return fmt.Errorf("instr: action %d: more than %d parameters", i, MaxActionParams)
		}
		for j, k := range a.Kinds {
			if k > ParamFloat32 {
				return fmt.Errorf("instr: action %d: parameter %d: %v", i, j, k)
			}
		}
	}
	return nil
}

// The block of a call's actions, which the Enter entry leaves for the wrap
// (clrprof_gohook_act_take) in memory from malloc, read by the wrap's IL
// and freed by clrprof_gohook_act_done:
//
//	0   int32 the number of records
//	4   int32 the target's index in goTable (to count throws)
//	8   records, actRecSize bytes each:
//	    0   int32 the action (GoHooks.Actions' index)
//	    4   int32 set to 1 by the wrap when the action threw
//	    8+16j   the address of string j's UTF-16 units (never null),
//	            or value j as an int64 (a bool 0 or 1)
//	    16+16j  int32 the string's length in units
//	    72  the first exception's type name (malloc'd by
//	        clrprof_gohook_act_threw: an int32 count and the units), or 0
//	then the strings' units.
const (
	actHeader  = 8
	actRecSize = 8 + 16*MaxActionParams + 8
)

// actBlockSize is the size of the block of acts.
func actBlockSize(acts []ActionRequest) int {
	n := actHeader + actRecSize*len(acts)
	for _, a := range acts {
		for _, v := range a.Args {
			if s, ok := v.(string); ok {
				n += 2 * utf16Len(s)
			}
		}
	}
	return n
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// fillActBlock writes the block of acts for target id into buf (of
// actBlockSize bytes), whose first byte is at address base.
func fillActBlock(buf []byte, base uintptr, id int32, acts []ActionRequest) {
	le := binary.LittleEndian
	// The count is written last (clrprof_gohook_act_alloc wrote 0): a
	// block left half written would run nothing.
	le.PutUint32(buf[0:], 0)
	le.PutUint32(buf[4:], uint32(id))
	defer le.PutUint32(buf[0:], uint32(len(acts)))
	str := actHeader + actRecSize*len(acts)
	for r, a := range acts {
		rec := buf[actHeader+actRecSize*r : actHeader+actRecSize*(r+1)]
		clear(rec)
		le.PutUint32(rec[0:], uint32(a.Action))
		for j, v := range a.Args {
			s, ok := v.(string)
			if !ok {
				// An integer (a bool is 0 or 1): in the address's place.
				x, _ := v.(int64)
				le.PutUint64(rec[8+16*j:], uint64(x))
				continue
			}
			le.PutUint64(rec[8+16*j:], uint64(base)+uint64(str))
			n := 0
			for _, c := range s {
				if c1, c2 := utf16.EncodeRune(c); c1 != '\uFFFD' || c2 != '\uFFFD' {
					le.PutUint16(buf[str:], uint16(c1))
					le.PutUint16(buf[str+2:], uint16(c2))
					str += 4
					n += 2
				} else {
					le.PutUint16(buf[str:], uint16(c))
					str += 2
					n++
				}
			}
			le.PutUint32(rec[16+16*j:], uint32(n))
		}
	}
}
