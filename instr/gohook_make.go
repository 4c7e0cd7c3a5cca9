package instr

import (
	"math"
	"time"
)

// Values, calls and returns as the SDK hands them to Go hooks, made by
// hand: for a hook's unit tests (hand the hook what the SDK would, without
// a runtime) and for replaying recorded calls through hooks. A Value made
// here equals (==) the one the SDK makes for the same argument of a real
// call (TestGoHooks checks it on every runtime, in both modes).

// IntValue is a KindInt value of type typ (System.SByte, System.Int16,
// System.Int32, System.Int64, System.IntPtr).
func IntValue(typ string, v int64) Value {
	return Value{Kind: KindInt, Type: typ, bits: uint64(v)}
}

// UintValue is a KindUint value of type typ (System.Byte, System.UInt16,
// System.UInt32, System.UInt64, System.UIntPtr).
func UintValue(typ string, v uint64) Value {
	return Value{Kind: KindUint, Type: typ, bits: v, unsigned: true}
}

// FloatValue is a KindFloat value of type typ (System.Single, its value
// widened to float64 as the SDK does, or System.Double).
func FloatValue(typ string, v float64) Value {
	return Value{Kind: KindFloat, Type: typ, bits: math.Float64bits(v)}
}

// BoolValue is a System.Boolean value.
func BoolValue(v bool) Value {
	x := Value{Kind: KindBool, Type: "System.Boolean", unsigned: true}
	if v {
		x.bits = 1
	}
	return x
}

// CharValue is a System.Char value: one UTF-16 code unit.
func CharValue(c uint16) Value {
	return Value{Kind: KindChar, Type: "System.Char", bits: uint64(c), unsigned: true}
}

// StringValue is a System.String value, whole.
func StringValue(s string) Value {
	return Value{Kind: KindString, Type: "System.String", str: s}
}

// NullStringValue is a null System.String.
func NullStringValue() Value {
	return Value{Kind: KindString, Type: "System.String", null: true}
}

// TruncatedStringValue is a System.String a deferred hook got cut short:
// prefix is what it kept (Value.Truncated).
func TruncatedStringValue(prefix string) Value {
	return Value{Kind: KindString, Type: "System.String", str: prefix, trunc: true}
}

// EnumValue is a KindEnum value of the enum typ (Shop.Color) with a signed
// underlying type.
func EnumValue(typ string, v int64) Value {
	return Value{Kind: KindEnum, Type: typ, bits: uint64(v)}
}

// UnsignedEnumValue is a KindEnum value of the enum typ with an unsigned
// underlying type (byte, ushort, uint, ulong, char, bool).
func UnsignedEnumValue(typ string, v uint64) Value {
	return Value{Kind: KindEnum, Type: typ, bits: v, unsigned: true}
}

// ObjectValue is a KindObject value of type typ: a reference other than a
// string, a struct or a pointer, which hooks get without its value.
func ObjectValue(typ string) Value {
	return Value{Kind: KindObject, Type: typ}
}

// NullMemberValue is a member (GoHooks.Members) of kind k and type typ
// that could not be read: an object on its path was null, or, with threw,
// a getter threw.
func NullMemberValue(k Kind, typ string, threw bool) Value {
	return Value{Kind: k, Type: typ, null: true, threw: threw}
}

// VoidValue is what a void method's Exit hook gets as Return.Value.
func VoidValue() Value { return Value{Kind: KindVoid} }

// CallFields are what NewCall makes a Call of: what its methods return.
type CallFields struct {
	Method int32
	Thread uint64
	Args   []Value // copied; nil as without GoHooks.Args
	Time   time.Time
	// Members are the values of GoHooks.Members by index (copied): the
	// argument members' (Call.Member); the others KindVoid.
	Members []Value
	// Actions are the hooks' GoHooks.Actions, which Call.Act checks its
	// requests against; Call.Actions returns what Enter asked for.
	Actions []Action
}

// NewCall returns a Call as the SDK hands it to an Enter hook.
func NewCall(f CallFields) *Call {
	c := &Call{method: f.Method, thread: f.Thread, time: f.Time, actions: f.Actions}
	if f.Args != nil {
		c.args = append([]Value{}, f.Args...)
	}
	if f.Members != nil {
		c.members = append([]Value{}, f.Members...)
	}
	return c
}

// ReturnFields are what NewReturn makes a Return of: what its methods
// return.
type ReturnFields struct {
	Method                 int32
	Thread                 uint64
	State                  uint64
	Value                  Value
	Exception              bool
	ExceptionType          string
	ExceptionTypeTruncated bool
	Async                  bool
	Canceled               bool
	Time                   time.Time
	// Members are the values of GoHooks.Members by index (copied): the
	// result members' (Return.Member); the others KindVoid.
	Members []Value
	// Actions are the hooks' GoHooks.Actions, which Return.Act checks its
	// requests against; Return.Actions returns what Exit asked for.
	Actions []Action
}

// NewReturn returns a Return as the SDK hands it to an Exit hook.
func NewReturn(f ReturnFields) *Return {
	r := &Return{method: f.Method, thread: f.Thread, state: f.State, value: f.Value,
		exc: f.Exception, excType: f.ExceptionType, excTrunc: f.ExceptionTypeTruncated,
		async: f.Async, canceled: f.Canceled, time: f.Time}
	if len(f.Actions) > 0 {
		r.actions = &f.Actions
	}
	if f.Members != nil {
		m := append([]Value{}, f.Members...)
		r.members = &m
	}
	return r
}
