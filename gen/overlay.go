package gen

import (
	"fmt"
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
//
// sfalse: S_FALSE is an answer (see SFalse); handwritten: the generated call
// stays unexported under a lower-case name, and a hand-written method with
// the good name replaces it (it must guard against something the runtime
// does that the IDL cannot say).
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
	// Docs is idl/docs.txt (nil: generated docs carry only the facts).
	Docs *Docs
}

// ParseOverlay reads the overlay's text form.
func ParseOverlay(name string, src []byte) (*Overlay, error) {
	o := &Overlay{Params: map[string]map[string]ParamRule{}, Types: map[string]string{}, SFalse: map[string]bool{}, HandWritten: map[string]bool{}, ValueEnums: map[string]bool{}}
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
