package instr

import (
	"strconv"
	"strings"

	"github.com/clrprof/clrprof/instr/target"
	"github.com/clrprof/clrprof/metadata"
)

// systemNames are the reflection names of the primitive element types.
var systemNames = map[metadata.ElementType]string{
	metadata.ElementTypeVoid: "System.Void", metadata.ElementTypeBoolean: "System.Boolean",
	metadata.ElementTypeChar: "System.Char", metadata.ElementTypeI1: "System.SByte",
	metadata.ElementTypeU1: "System.Byte", metadata.ElementTypeI2: "System.Int16",
	metadata.ElementTypeU2: "System.UInt16", metadata.ElementTypeI4: "System.Int32",
	metadata.ElementTypeU4: "System.UInt32", metadata.ElementTypeI8: "System.Int64",
	metadata.ElementTypeU8: "System.UInt64", metadata.ElementTypeR4: "System.Single",
	metadata.ElementTypeR8: "System.Double", metadata.ElementTypeString: "System.String",
	metadata.ElementTypeObject: "System.Object", metadata.ElementTypeI: "System.IntPtr",
	metadata.ElementTypeU: "System.UIntPtr", metadata.ElementTypeTypedbyref: "System.TypedReference",
}

// TypeNamer names the types a signature refers to by token (TypeDef,
// TypeRef, TypeSpec); *metadata.Import2 is one.
type TypeNamer interface {
	TypeDefName(td metadata.Token) (string, error)
	TypeRefName(tr metadata.Token) (string, error)
	TypeSpec(ts metadata.Token) ([]byte, error)
}

// ParamName writes a parameter type as a target's parameter list spells it:
// the reflection full name (System.Int32, Shop.Box`1+Inner), with []
// or [,] for arrays, * for pointers, & for by-ref, [A,B] after a generic
// type for its arguments, and !N / !!N for the type's and the method's
// generic parameters. Custom modifiers are left out. n names type tokens.
func ParamName(n TypeNamer, t *metadata.Type) string {
	var sb strings.Builder
	writeParam(&sb, n, t, 0)
	return sb.String()
}

func paramNames(n TypeNamer, sig *metadata.MethodSig) []string {
	out := make([]string, len(sig.Params))
	for i, p := range sig.Params {
		out[i] = ParamName(n, p)
	}
	return out
}

func writeParam(sb *strings.Builder, n TypeNamer, t *metadata.Type, depth int) {
	if t == nil || depth > 64 {
		sb.WriteString("?")
		return
	}
	switch t.Kind {
	case metadata.ElementTypeCmodReqd, metadata.ElementTypeCmodOpt, metadata.ElementTypePinned:
		writeParam(sb, n, t.Elem, depth+1)
	case metadata.ElementTypeClass, metadata.ElementTypeValuetype:
		sb.WriteString(tokenName(n, t.Token, depth))
	case metadata.ElementTypeVar:
		sb.WriteString("!" + strconv.Itoa(int(t.Index)))
	case metadata.ElementTypeMvar:
		sb.WriteString("!!" + strconv.Itoa(int(t.Index)))
	case metadata.ElementTypeSzarray:
		writeParam(sb, n, t.Elem, depth+1)
		sb.WriteString("[]")
	case metadata.ElementTypeArray:
		writeParam(sb, n, t.Elem, depth+1)
		rank := 1
		if t.Shape != nil && t.Shape.Rank > 1 {
			rank = int(t.Shape.Rank)
		}
		sb.WriteString("[" + strings.Repeat(",", rank-1) + "]")
	case metadata.ElementTypePtr:
		writeParam(sb, n, t.Elem, depth+1)
		sb.WriteString("*")
	case metadata.ElementTypeByref:
		writeParam(sb, n, t.Elem, depth+1)
		sb.WriteString("&")
	case metadata.ElementTypeGenericinst:
		writeParam(sb, n, t.Elem, depth+1)
		sb.WriteString("[")
		for i, a := range t.Args {
			if i > 0 {
				sb.WriteString(",")
			}
			writeParam(sb, n, a, depth+1)
		}
		sb.WriteString("]")
	case metadata.ElementTypeFnptr:
		sb.WriteString("System.IntPtr")
	default:
		if s, ok := systemNames[t.Kind]; ok {
			sb.WriteString(s)
		} else {
			sb.WriteString("?")
		}
	}
}

func tokenName(n TypeNamer, tok metadata.Token, depth int) string {
	var name string
	var err error
	switch metadata.TokenType(tok.Table()) {
	case metadata.MdtTypeDef:
		name, err = n.TypeDefName(tok)
	case metadata.MdtTypeRef:
		name, err = n.TypeRefName(tok)
	case metadata.MdtTypeSpec:
		blob, err := n.TypeSpec(tok)
		if err != nil {
			return "?"
		}
		t, err := metadata.ParseTypeSpec(blob)
		if err != nil {
			return "?"
		}
		var sb strings.Builder
		writeParam(&sb, n, t, depth+1)
		return sb.String()
	default:
		return "?"
	}
	if err != nil {
		return "?"
	}
	return target.TypeFromIL(name)
}
