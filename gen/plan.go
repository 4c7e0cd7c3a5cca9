package gen

import (
	"fmt"
	"strings"
)

// Role says how one C parameter appears in Go.
type Role int

const (
	RoleIn         Role = iota // scalar argument
	RoleInGUID                 // const GUID* argument as uuid.UUID
	RoleInString               // NUL-terminated const WCHAR* as string
	RoleInSlice                // array with a count parameter, as a slice
	RoleInWString              // WCHAR array with a count, as string
	RoleInBytes                // byte pointer with a count, as []byte
	RoleInIface                // interface pointer, as a wrapper
	RoleInPtr                  // other pointer: unsafe.Pointer (Go→C) or uintptr (C→Go)
	RoleCount                  // hidden: the count of an in slice, or an out array's capacity
	RoleOut                    // T* out: a result
	RoleOutString              // WCHAR buffer with capacity and length: string result
	RoleOutSlice               // array with capacity and length: slice result
	RoleOutLen                 // hidden: filled length of an out array
	RoleOutBlob                // T** plus a byte count: []byte result (copied)
	RoleOutBlobLen             // hidden: the byte count of a blob
	RoleRaw                    // anything else: unsafe.Pointer argument
	RoleEnumHandle             // HCORENUM* (*EnumHandle) or HCORENUM (EnumHandle): an enumeration
	RoleInAddr                 // pointer to runtime memory passed as an Address (overlay role=addr)
	RoleHidden                 // reserved parameter: zero, not in the Go signature (overlay role=hidden)
)

// PlannedParam is one parameter with its mapping decision.
type PlannedParam struct {
	P      *Param
	T      TypeRef // normalized type (pointer typedefs expanded)
	Elem   TypeInfo
	Role   Role
	Count  *PlannedParam // RoleInSlice etc.: the count; RoleOutString/Slice: the capacity
	Len    *PlannedParam // RoleOutString/Slice: the filled length; RoleOutBlob: byte count
	GoName string        // parameter name, or result field name
}

// Plan is the Go shape of one method.
type Plan struct {
	M       *Method
	Params  []*PlannedParam
	Inputs  []*PlannedParam // Go arguments in order
	Outputs []*PlannedParam // Go results in order (before error)
	Raw     int             // parameters left as unsafe.Pointer
	Addr    TypeInfo        // the Go address type (for pointer return values)
	SFalse  bool            // S_FALSE is an answer: a bool result before the error
	// HandWritten: the overlay says a hand-written method replaces the
	// generated one, which stays unexported.
	HandWritten bool
}

// Exported reports whether the method's Go form shows only Go types (no
// unsafe.Pointer, no uintptr, no C function pointer): only such methods are
// exported; the others stay unexported raw calls under a lower-case name,
// for hand-written idiomatic methods to build on.
func (pl *Plan) Exported() bool {
	if pl.HandWritten {
		return false
	}
	for _, in := range pl.Inputs {
		if in.Role == RoleRaw || in.Role == RoleInPtr || in.Elem.Kind == KindFunc || in.Elem.GoName == "uintptr" ||
			in.Elem.Kind == KindVoid && in.Role != RoleInBytes {
			return false
		}
	}
	for _, o := range pl.Outputs {
		if o.Role == RoleOutBlob {
			continue // a copied []byte whatever the C element type
		}
		if o.Elem.Kind == KindVoid || o.Elem.Kind == KindFunc || o.Elem.GoName == "uintptr" {
			return false
		}
	}
	if r := pl.M.Ret; r.Name != "HRESULT" && r.Name != "void" && len(pl.Outputs) == 0 && TypeInfoFor(r.Name).GoName == "uintptr" {
		return false // a pointer returned by value (IMethodMalloc::Alloc)
	}
	return true
}

// GoName is the method's Go name: the C name when Exported, else the C name
// with a lower-case first letter.
func (pl *Plan) GoName() string {
	if pl.Exported() {
		return pl.M.Name
	}
	return strings.ToLower(pl.M.Name[:1]) + pl.M.Name[1:]
}

// ParamRule is an overlay rule for one parameter.
type ParamRule struct {
	SizeIs   string
	LengthIs string
	Role     string // "raw" forces RoleRaw
	As       string // C type whose Go type the parameter takes (a DWORD of flags as their enum)
}

// planMethod decides the Go shape of m. callback is true for methods the
// runtime calls (ICorProfilerCallbackN), false for methods Go calls.
func planMethod(tm *TypeMapper, m *Method, callback bool, rules map[string]ParamRule) (*Plan, error) {
	pl := &Plan{M: m, Addr: tm.addressInfo("void")}
	byName := map[string]*PlannedParam{}
	for _, p := range m.Params {
		pp := &PlannedParam{P: p, T: tm.Norm(p.Type)}
		if r, ok := rules[p.Name]; ok {
			cp := *p
			if r.SizeIs != "" {
				cp.SizeIs = r.SizeIs
			}
			if r.LengthIs != "" {
				cp.LengthIs = r.LengthIs
			}
			pp.P = &cp
			switch r.Role {
			case "raw":
				pp.Role = RoleRaw
			case "addr":
				pp.Role = RoleInAddr
			case "hidden":
				pp.Role = RoleHidden
			case "out":
				cp.Dir = DirOut
			}
		}
		pp.Elem = tm.Info(pp.T.Name)
		if r, ok := rules[p.Name]; ok && r.As != "" {
			as := tm.Info(r.As)
			if n, ok := strings.CutPrefix(r.As, "metadata."); ok && tm.Pkg != tokenPkg && pp.Elem.Kind == KindNumber {
				// A metadata flag type in another package's signature
				// (as=metadata.OpenFlags): the C parameter keeps its type.
				as = TypeInfo{Kind: KindEnum, CName: pp.Elem.CName, GoName: n, GoPkg: tokenPkg, GoBasic: pp.Elem.GoBasic}
			}
			if as.Kind == KindUnknown {
				return nil, fmt.Errorf("overlay: %s: as=%s is not a known type", p.Name, r.As)
			}
			pp.Elem = as
		}
		pl.Params = append(pl.Params, pp)
		byName[p.Name] = pp
	}
	// Infer capacity/length for out arrays declared without them, from the
	// two layouts the inputs use: [in] cX, [out] *pcX, [out] X[] (corprof)
	// and [out] rX[], [in] cMax, [out] *pcX (cor.h).
	for i, pp := range pl.Params {
		p := pp.P
		if p.Dir != DirOut || !pp.T.Array || p.SizeIs != "" {
			continue
		}
		if i >= 2 {
			c, l := pl.Params[i-2].P, pl.Params[i-1].P
			if c.Dir == DirIn && l.Dir == DirOut && l.Type.Ptr == 1 && c.Type.Ptr == 0 && strings.HasPrefix(c.Name, "c") && l.Name == "p"+c.Name {
				cp := *p
				cp.SizeIs, cp.LengthIs = c.Name, "*"+l.Name
				pp.P = &cp
				continue
			}
		}
		if i+2 < len(pl.Params) {
			c, l := pl.Params[i+1].P, pl.Params[i+2].P
			if c.Dir == DirIn && c.Type.Ptr == 0 && !c.Type.Array && l.Dir == DirOut && l.Type.Ptr == 1 && strings.HasPrefix(c.Name, "c") && strings.HasPrefix(l.Name, "pc") {
				cp := *p
				cp.SizeIs, cp.LengthIs = c.Name, "*"+l.Name
				pp.P = &cp
			}
		}
	}
	// A byte blob passed in as "[in] const BYTE/void *pX, [in] ULONG cbX"
	// without size_is (cor.h's signatures and attribute values): []byte.
	for i, pp := range pl.Params {
		p := pp.P
		if p.Dir != DirIn || p.SizeIs != "" || pp.Role != 0 || pp.T.Indirections() != 1 || pp.T.Array || i+1 >= len(pl.Params) ||
			(pp.Elem.Kind != KindVoid && pp.Elem.GoBasic != "uint8") {
			continue
		}
		c := pl.Params[i+1]
		if c.P.Dir == DirIn && c.T.Indirections() == 0 && c.Elem.Kind == KindNumber && strings.HasPrefix(c.P.Name, "cb") {
			cp := *p
			cp.SizeIs = c.P.Name
			pp.P = &cp
		}
	}
	ref := func(expr string) (*PlannedParam, bool) {
		deref := strings.HasPrefix(expr, "*")
		q, ok := byName[strings.TrimPrefix(expr, "*")]
		return q, ok && (deref == (q != nil && q.P.Dir != DirIn))
	}
	for i, pp := range pl.Params {
		if pp.Role == RoleRaw || pp.Role == RoleCount || pp.Role == RoleOutLen || pp.Role == RoleOutBlobLen || pp.Role == RoleInAddr || pp.Role == RoleHidden {
			if pp.Role == RoleInAddr {
				pp.Elem = tm.addressInfo(pp.T.Name)
			}
			continue
		}
		p, t := pp.P, pp.T
		ind := t.Indirections()
		switch {
		case t.Name == "HCORENUM" && (ind == 1 || ind == 0):
			pp.Role = RoleEnumHandle
		case p.Dir == DirIn && ind == 0:
			if pp.Elem.Kind == KindUnknown || pp.Elem.Kind == KindVoid || pp.Elem.Kind == KindStruct {
				pp.Role = RoleRaw
			} else {
				pp.Role = RoleIn
			}
		case p.Dir == DirIn && (p.SizeIs != "" || p.LengthIs != "") && ind == 1:
			expr := p.SizeIs
			if expr == "" {
				expr = p.LengthIs
			}
			cnt, ok := ref(expr)
			if !ok || cnt.P.Dir != DirIn || cnt.T.Indirections() != 0 {
				pp.Role = RoleRaw
				break
			}
			cnt.Role = RoleCount
			pp.Count = cnt
			switch pp.Elem.Kind {
			case KindWCHAR:
				pp.Role = RoleInWString
			case KindVoid:
				pp.Role = RoleInBytes
			case KindNumber:
				if pp.Elem.GoBasic == "uint8" {
					pp.Role = RoleInBytes
				} else {
					pp.Role = RoleInSlice
				}
			case KindID, KindToken, KindEnum, KindBool, KindStruct, KindHRESULT, KindAddr:
				pp.Role = RoleInSlice
			default:
				pp.Role = RoleRaw
			}
		case p.Dir == DirIn && ind == 1 && pp.Elem.Kind == KindWCHAR && pp.T.Const:
			pp.Role = RoleInString
		case p.Dir == DirIn && ind == 1 && pp.Elem.Kind == KindGUID:
			pp.Role = RoleInGUID
		case ind == 1 && pp.Elem.Kind == KindIface && !pp.T.Array:
			// An interface pointer (not pointer-to-pointer) is always an
			// argument, whatever direction a header's heuristics gave it.
			pp.Role = RoleInIface
		case p.Dir == DirIn && ind >= 1:
			pp.Role = RoleInPtr
		case p.Dir == DirOut && ind == 1 && p.SizeIs != "":
			capP, okc := ref(p.SizeIs)
			lenP, okl := ref(p.LengthIs)
			if callback || !okc || !okl || capP.P.Dir != DirIn || lenP.P.Dir != DirOut || capP.T.Indirections() != 0 {
				pp.Role = RoleRaw
				break
			}
			capP.Role, lenP.Role = RoleCount, RoleOutLen
			pp.Count, pp.Len = capP, lenP
			switch pp.Elem.Kind {
			case KindWCHAR:
				pp.Role = RoleOutString
			case KindNumber, KindID, KindToken, KindEnum, KindStruct, KindHRESULT, KindAddr:
				pp.Role = RoleOutSlice
			default:
				pp.Role = RoleRaw
			}
		case p.Dir == DirOut && ind == 2 && !pp.T.Array && (pp.Elem.Kind == KindVoid || pp.Elem.GoBasic == "uint8") &&
			!constantValue(p) && i+1 < len(pl.Params) && pl.Params[i+1].P.Dir == DirOut && pl.Params[i+1].T.Indirections() == 1 &&
			pl.Params[i+1].Elem.Kind == KindNumber && blobLenName(pl.Params[i+1].P.Name):
			pp.Role = RoleOutBlob
			pp.Len = pl.Params[i+1]
			pp.Len.Role = RoleOutBlobLen
		case p.Dir == DirOut && ind == 2 && !pp.T.Array && (pp.Elem.Kind == KindVoid || pp.Elem.GoBasic == "uint8") &&
			!constantValue(p) && i > 0 && pl.Params[i-1].P.Dir == DirOut && pl.Params[i-1].T.Indirections() == 1 &&
			pl.Params[i-1].Elem.Kind == KindNumber && pl.Params[i-1].Role == RoleOut && blobLenName(pl.Params[i-1].P.Name):
			// [out] ULONG *pcbData, [out] const void **ppData: the length first.
			pp.Role = RoleOutBlob
			pp.Len = pl.Params[i-1]
			pp.Len.Role = RoleOutBlobLen
		case (p.Dir == DirOut || p.Retval) && ind == 1 && !pp.T.Array:
			switch pp.Elem.Kind {
			case KindUnknown, KindVoid, KindFunc:
				pp.Role = RoleRaw
			default:
				pp.Role = RoleOut
			}
		case (p.Dir == DirOut || p.Retval) && ind == 2 && !pp.T.Array && pp.Elem.Kind == KindIface:
			pp.Role = RoleOut
		case (p.Dir == DirOut || p.Retval) && ind == 2 && !pp.T.Array && (pp.Elem.Kind == KindVoid || pp.Elem.GoBasic == "uint8"):
			// void**, BYTE**: the address of runtime memory.
			pp.Role = RoleOut
			pp.Elem = tm.addressInfo(pp.T.Name)
		default:
			pp.Role = RoleRaw
		}
		if callback && (pp.Role == RoleOutBlob || pp.Role == RoleOutString || pp.Role == RoleOutSlice) {
			pp.Role = RoleRaw
		}
	}
	for _, pp := range pl.Params {
		switch pp.Role {
		case RoleCount, RoleOutLen, RoleOutBlobLen, RoleHidden:
			continue
		case RoleOut, RoleOutString, RoleOutSlice, RoleOutBlob:
			pp.GoName = ResultName(pp.P.Name)
			pl.Outputs = append(pl.Outputs, pp)
		default:
			if pp.Role == RoleRaw {
				pl.Raw++
			}
			pp.GoName = ParamName(pp.P.Name)
			pl.Inputs = append(pl.Inputs, pp)
		}
	}
	// Unique result field names.
	seen := map[string]int{}
	for _, o := range pl.Outputs {
		seen[o.GoName]++
		if seen[o.GoName] > 1 {
			o.GoName = fmt.Sprintf("%s%d", o.GoName, seen[o.GoName])
		}
	}
	seenIn := map[string]bool{}
	for _, in := range pl.Inputs {
		base := in.GoName
		for i := 2; seenIn[in.GoName]; i++ {
			in.GoName = fmt.Sprintf("%s%d", base, i)
		}
		seenIn[in.GoName] = true
	}
	return pl, nil
}

func blobLenName(n string) bool {
	return strings.HasPrefix(n, "pcb") || strings.HasPrefix(n, "pcch") || strings.HasPrefix(n, "pcSig") ||
		strings.HasPrefix(n, "pSize") || strings.HasPrefix(n, "pul") || n == "pbSig"
}

// constantValue reports a metadata constant's value (UVCP_CONSTANT): its
// length comes in characters for strings and not at all for other types,
// so it is no byte blob.
func constantValue(p *Param) bool { return p.Type.Name == "UVCP_CONSTANT" }
