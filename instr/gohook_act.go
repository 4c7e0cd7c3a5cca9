package instr

import (
	"encoding/binary"
	"fmt"
	"unicode/utf16"
)

// Action is a method that a synchronous Enter hook may ask the wrap to
// call (Call.Act) right after it returns, before the method's body runs:
// on the object reached from argument Arg (0 for the first parameter;
// This for the instance) through Path (a dotted list of property or field
// names, resolved as Member's; "" for the argument itself), the instance
// method named Method that takes exactly Params parameters, all strings
// (at most MaxActionParams), with the strings Enter gave. Its result, if
// any, is dropped. It is how a Go integration sets a header for
// propagation without C#:
//
//	Action{Arg: 0, Path: "Headers", Method: "TryAddWithoutValidation", Params: 2}
//
// on HttpMessageInvoker.SendAsync(HttpRequestMessage, CancellationToken).
//
// The method is resolved when the target is wrapped, on the class the
// path ends at or its base types, in whatever loaded module defines each
// (public, or internal in the target's module; not static, not generic);
// callvirt dispatches to an override. One that does not resolve leaves
// the target unwrapped, with the reason in Instrumenter.Report. An action
// runs only on the calls whose Enter asked for it, in the order asked,
// each under a filter that accepts every exception: an action that throws
// stops there, is counted (GoActionErrors) and the call goes on; a null
// object on the path skips it. Deferred hooks cannot act (their Enter runs
// after the call): a rule with both is refused by New.
type Action struct {
	Arg    int
	Path   string
	Method string
	Params int
}

// MaxActionParams is the number of string parameters an Action's method
// may take.
const MaxActionParams = 4

// MaxActs is the number of actions one Enter may ask for (Call.Act).
const MaxActs = 64

// maxActBytes bounds the bytes (UTF-8) of the strings one call's actions
// carry: their UTF-16 copies in the block take at most 1 MiB.
const maxActBytes = 1 << 19

// ActionRequest is an action an Enter hook asked for: GoHooks.Actions'
// index and the strings passed to its method.
type ActionRequest struct {
	Action int
	Args   []string
}

// Act asks the wrap to run GoHooks.Actions[i] with args (as many as its
// Params) once Enter returns; actions asked for several times run as many
// times, in the order asked. It returns an error, and asks for nothing,
// when i is not an index of GoHooks.Actions (a deferred hook has none),
// when len(args) is not the action's Params, or beyond MaxActs actions or
// 512 KiB of strings a call. If Enter panics, nothing it asked for runs.
func (c *Call) Act(i int, args ...string) error {
	if i < 0 || i >= len(c.actions) {
		return fmt.Errorf("instr: Act(%d): the hooks have %d actions", i, len(c.actions))
	}
	if p := c.actions[i].Params; len(args) != p {
		return fmt.Errorf("instr: Act(%d): %d strings for %s, which takes %d", i, len(args), c.actions[i].Method, p)
	}
	if len(c.acts) >= MaxActs {
		return fmt.Errorf("instr: Act(%d): more than %d actions in one call", i, MaxActs)
	}
	n := 0
	for _, a := range args {
		n += len(a)
	}
	if c.actBytes+n > maxActBytes {
		return fmt.Errorf("instr: Act(%d): more than %d bytes of strings in one call", i, maxActBytes)
	}
	c.actBytes += n
	c.acts = append(c.acts, ActionRequest{Action: i, Args: append([]string(nil), args...)})
	return nil
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
	if h.Enter == nil {
		return fmt.Errorf("instr: GoHooks.Actions need Enter, which asks for them")
	}
	for i, a := range h.Actions {
		switch {
		case a.Arg < 0 && a.Arg != This:
			return fmt.Errorf("instr: action %d: Arg %d: an argument's index or This", i, a.Arg)
		case a.Method == "":
			return fmt.Errorf("instr: action %d: no Method", i)
		case a.Params < 0 || a.Params > MaxActionParams:
			return fmt.Errorf("instr: action %d: %d parameters, at most %d", i, a.Params, MaxActionParams)
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
//	    8+16j   the address of string j's UTF-16 units (never null)
//	    16+16j  int32 its length in units
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
		for _, s := range a.Args {
			n += 2 * utf16Len(s)
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
		for j, s := range a.Args {
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
