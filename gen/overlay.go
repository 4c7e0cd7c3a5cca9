package gen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/clrprof/clrprof/idl"
)

// Overlay is what the project says about its inputs that the inputs cannot:
// parameter mappings the IDL leaves implicit, and Go names.
//
// The text form has one rule a line; '#' starts a comment:
//
//	param Interface.Method paramName size_is=EXPR length_is=EXPR role=ROLE as=CTYPE
//
// Roles: raw keeps the parameter as the C pointer (the method stays
// unexported); out makes a pointer the header does not mark [out] a result;
// addr passes a pointer to runtime memory (an IP, a code address, a buffer
// the runtime allocated) as an Address; hidden passes zero and leaves the
// parameter out of the Go signature (reserved and unused parameters).
//
//	type  CName GoName
//	enum  CName values
//	method Interface.Method sfalse|handwritten
//	unexported package CName
//	value Enum Name Value [after=Name] [was=Value]
//
// sfalse: S_FALSE is an answer (see SFalse); handwritten: the generated call
// stays unexported under a lower-case name, and a hand-written method with
// the good name replaces it (it must guard against something the runtime
// does that the IDL cannot say).
//
// unexported: the Go mirror of the C struct CName is unexported in the
// package (profiler or metadata), for a struct no exported API uses, so that
// the package's documentation shows only the structs a user can meet
// (internal/apicheck's TestRawStructsUsed fails on an exported one that
// nothing exported uses).
//
// value adds an enumerator that a newer runtime's headers have and the
// inputs lack (the comment above it names its upstream source): Enum is the
// C enum's name, Value a C integer literal, after= the enumerator it
// follows (default: the end; inputs that lack it are older than the
// enumerator, and the rule is skipped). When the inputs already have Name with that
// value (a newer input set), the rule does nothing; with another value it is
// an error, unless was= names the value the older inputs have and the rule
// replaces it (a mask that grew).
type Overlay struct {
	Params map[string]map[string]ParamRule // "Interface.Method" → param → rule
	Types  map[string]string               // C type name → Go type name
	// SFalse names methods ("Interface.Method") whose S_FALSE is an answer
	// ("no", "not an array"): the Go method returns it as a bool before the
	// error, true for S_OK.
	SFalse map[string]bool
	// HandWritten names methods whose exported form is written by hand.
	HandWritten map[string]bool
	// ValueEnums names enums that are lists of values although their
	// values look like bit flags (CorElementType: 1, 2, 4, 8 ... are
	// element types, not bits): their String never joins names with |.
	ValueEnums map[string]bool
	// Unexported names, per Go package name ("profiler", "metadata"), the
	// C structs whose Go mirror is unexported there.
	Unexported map[string]map[string]bool
	// Values are the enumerators the inputs lack, in the overlay's order.
	Values []ValueRule
	// Docs is idl/docs.txt (nil: generated docs carry only the facts).
	Docs *Docs
}

// ValueRule is one value rule: an enumerator to add to a C enum.
type ValueRule struct {
	Enum, Name string
	Value      int64
	After      string // the enumerator it follows; "" for the end
	Was        *int64 // the value older inputs have, which it replaces
	Pos        Pos
}

// ParseOverlay reads the overlay's text form.
func ParseOverlay(name string, src []byte) (*Overlay, error) {
	o := &Overlay{Params: map[string]map[string]ParamRule{}, Types: map[string]string{}, SFalse: map[string]bool{}, HandWritten: map[string]bool{}, ValueEnums: map[string]bool{}, Unexported: map[string]map[string]bool{}}
	for _, rec := range idl.Records(src) {
		fields := rec.Fields
		pos := Pos{File: name, Line: rec.Line, Col: 1}
		switch fields[0] {
		case "param":
			if len(fields) < 4 {
				return nil, errorf(pos, "param needs Interface.Method, a parameter name and at least one setting")
			}
			var r ParamRule
			for _, kv := range fields[3:] {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || v == "" {
					return nil, errorf(pos, "setting %q is not key=value", kv)
				}
				switch k {
				case "size_is":
					r.SizeIs = v
				case "length_is":
					r.LengthIs = v
				case "as":
					r.As = v
				case "role":
					if v != "raw" && v != "out" && v != "addr" && v != "hidden" {
						return nil, errorf(pos, "unknown role %q", v)
					}
					r.Role = v
				default:
					return nil, errorf(pos, "unknown setting %q", k)
				}
			}
			if o.Params[fields[1]] == nil {
				o.Params[fields[1]] = map[string]ParamRule{}
			}
			o.Params[fields[1]][fields[2]] = r
		case "method":
			if len(fields) != 3 || (fields[2] != "sfalse" && fields[2] != "handwritten") {
				return nil, errorf(pos, "method needs Interface.Method and sfalse or handwritten")
			}
			if fields[2] == "sfalse" {
				o.SFalse[fields[1]] = true
			} else {
				o.HandWritten[fields[1]] = true
			}
		case "enum":
			if len(fields) != 3 || fields[2] != "values" {
				return nil, errorf(pos, "enum needs a C enum name and values")
			}
			o.ValueEnums[fields[1]] = true
		case "value":
			r, err := parseValueRule(pos, fields)
			if err != nil {
				return nil, err
			}
			o.Values = append(o.Values, r)
		case "unexported":
			if len(fields) != 3 || (fields[1] != "profiler" && fields[1] != "metadata") {
				return nil, errorf(pos, "unexported needs a package (profiler or metadata) and a C struct name")
			}
			if o.Unexported[fields[1]] == nil {
				o.Unexported[fields[1]] = map[string]bool{}
			}
			o.Unexported[fields[1]][fields[2]] = true
		case "type":
			if len(fields) != 3 {
				return nil, errorf(pos, "type needs a C name and a Go name")
			}
			o.Types[fields[1]] = fields[2]
		default:
			return nil, errorf(pos, "unknown rule %q", fields[0])
		}
	}
	return o, nil
}

func parseValueRule(pos Pos, fields []string) (ValueRule, error) {
	if len(fields) < 4 {
		return ValueRule{}, errorf(pos, "value needs an enum, an enumerator and a value")
	}
	r := ValueRule{Enum: fields[1], Name: fields[2], Pos: pos}
	v, err := strconv.ParseInt(fields[3], 0, 64)
	if err != nil {
		return ValueRule{}, errorf(pos, "value %q: not an integer", fields[3])
	}
	r.Value = v
	for _, kv := range fields[4:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || v == "" {
			return ValueRule{}, errorf(pos, "setting %q is not key=value", kv)
		}
		switch k {
		case "after":
			r.After = v
		case "was":
			w, err := strconv.ParseInt(v, 0, 64)
			if err != nil {
				return ValueRule{}, errorf(pos, "was=%q: not an integer", v)
			}
			r.Was = &w
		default:
			return ValueRule{}, errorf(pos, "unknown setting %q", k)
		}
	}
	return r, nil
}

// AddValues applies the value rules to the enums of files (each enum is
// looked for in every file). A rule for an enum no file declares is an
// error; so is an enumerator the inputs have with another value than the
// rule's (unless it is the rule's was=). A rule whose after= enumerator the
// inputs lack is skipped (older inputs: the .NET Core 3.1 set) and named in
// skipped. Applying the rules twice changes nothing the second time.
func (o *Overlay) AddValues(files ...*File) (skipped []string, err error) {
	for _, r := range o.Values {
		var e *Enum
		for _, f := range files {
			for _, fe := range f.Enums {
				if fe.Name == r.Enum || (fe.Name == "" && fe.Tag == r.Enum) {
					e = fe
				}
			}
		}
		if e == nil {
			return skipped, errorf(r.Pos, "value %s: no enum %s in the inputs", r.Name, r.Enum)
		}
		if i := slices.IndexFunc(e.Values, func(v *EnumValue) bool { return v.Name == r.Name }); i >= 0 {
			switch have := e.Values[i].Value; {
			case have == r.Value:
			case r.Was != nil && have == *r.Was:
				e.Values[i] = &EnumValue{Name: r.Name, Expr: fmt.Sprintf("%#x", r.Value), Value: r.Value, Pos: r.Pos}
			default:
				return skipped, errorf(r.Pos, "value %s.%s: the inputs have %#x, the overlay %#x", r.Enum, r.Name, have, r.Value)
			}
			continue
		}
		if r.Was != nil {
			return skipped, errorf(r.Pos, "value %s.%s: was= names a value to replace, but the inputs lack %s", r.Enum, r.Name, r.Name)
		}
		at := len(e.Values)
		if r.After != "" {
			i := slices.IndexFunc(e.Values, func(v *EnumValue) bool { return v.Name == r.After })
			if i < 0 {
				skipped = append(skipped, r.Enum+"."+r.Name)
				continue
			}
			at = i + 1
		}
		v := &EnumValue{Name: r.Name, Expr: fmt.Sprintf("%#x", r.Value), Value: r.Value, Pos: r.Pos}
		e.Values = slices.Insert(e.Values, at, v)
	}
	return skipped, nil
}

// Check reports rules that name a method or parameter the inputs'
// interfaces lack (a misspelt or misplaced rule would otherwise be ignored
// silently). A rule for an interface the inputs do not declare at all is
// accepted: older inputs (the .NET Core 3.1 ABI) lack the newer interfaces.
func (o *Overlay) Check(files ...*File) error {
	params := map[string]map[string]bool{} // "Interface.Method" → parameter names
	ifaces := map[string]bool{}
	for _, f := range files {
		for _, it := range f.Interfaces {
			ifaces[it.Name] = true
			for _, m := range it.Methods {
				ps := map[string]bool{}
				for _, p := range m.Params {
					ps[p.Name] = true
				}
				params[it.Name+"."+m.Name] = ps
			}
		}
	}
	for _, key := range sortedKeys(o.Params) {
		ps, ok := params[key]
		if !ok && !ifaces[strings.SplitN(key, ".", 2)[0]] {
			continue
		}
		if !ok {
			return fmt.Errorf("idl/overlay.txt: param rule for %s: no such interface method", key)
		}
		for _, name := range sortedKeys(o.Params[key]) {
			if !ps[name] {
				return fmt.Errorf("idl/overlay.txt: param rule for %s: no parameter %s", key, name)
			}
		}
	}
	for _, m := range []map[string]bool{o.SFalse, o.HandWritten} {
		for _, key := range sortedKeys(m) {
			if _, ok := params[key]; !ok && ifaces[strings.SplitN(key, ".", 2)[0]] {
				return fmt.Errorf("idl/overlay.txt: method rule for %s: no such interface method", key)
			}
		}
	}
	return nil
}
