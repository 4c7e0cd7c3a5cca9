//go:build cgo

package metadata

import (
	"fmt"
	"strings"
)

// Names of tokens and signatures read through an Import2 (see names.go for
// the format).

// maxNameLen bounds a formatted name (a TypeSpec may nest generic
// instantiations whose names double at each level).
const maxFormatted = 1 << 16

// TypeDefName returns the name of a TypeDef: "Namespace.Outer+Nested".
func (x *Import2) TypeDefName(td Token) (string, error) {
	return joinChain(x.typeDefChain(td))
}

// TypeRefName returns the name of a TypeRef, with its enclosing TypeRefs
// for a nested type: "Namespace.Outer+Nested".
func (x *Import2) TypeRefName(tr Token) (string, error) {
	return joinChain(x.typeRefChain(tr))
}

// typeDefChain is the nesting chain of a TypeDef.
func (x *Import2) typeDefChain(td Token) ([]string, error) {
	return nestingChain("type", td, func(td Token) (string, Token, bool, error) {
		info, err := x.TypeDef(td)
		return JoinTypeName(info.Namespace, info.Name), info.Enclosing, info.IsNested(), err
	})
}

// typeRefChain is the nesting chain of a TypeRef: its resolution scope is
// the enclosing type when that is a TypeRef.
func (x *Import2) typeRefChain(tr Token) ([]string, error) {
	return nestingChain("type reference", tr, func(tr Token) (string, Token, bool, error) {
		info, err := x.TypeRef(tr)
		nested := TokenType(info.Scope.Table()) == MdtTypeRef && !info.Scope.IsNil()
		return JoinTypeName(info.Namespace, info.Name), info.Scope, nested, err
	})
}

// TypeName returns the name of a TypeDef, TypeRef or TypeSpec (the latter
// formatted from its signature in ILAsm style).
func (x *Import2) TypeName(tk Token, ctx *GenericContext) (string, error) {
	return x.typeTokenName(tk, ctx, ILAsm, 0)
}

func (x *Import2) typeTokenName(tk Token, ctx *GenericContext, s Style, depth int) (string, error) {
	switch TokenType(tk.Table()) {
	case MdtTypeDef:
		return x.TypeDefName(tk)
	case MdtTypeRef:
		return x.TypeRefName(tk)
	case MdtTypeSpec:
		if depth > MaxSigDepth {
			return "", fmt.Errorf("metadata: type spec %v: nesting deeper than %d", tk, MaxSigDepth)
		}
		blob, err := x.TypeSpec(tk)
		if err != nil {
			return "", fmt.Errorf("metadata: type spec %v: %w", tk, err)
		}
		t, err := ParseTypeSpec(blob)
		if err != nil {
			return "", fmt.Errorf("metadata: type spec %v: %w", tk, err)
		}
		return x.formatType(t, ctx, s, depth+1)
	}
	return "", fmt.Errorf("metadata: %v is not a type token", tk)
}

// FormatType formats a signature type with the module's token names.
func (x *Import2) FormatType(t *Type, ctx *GenericContext, s Style) (string, error) {
	return x.formatType(t, ctx, s, 0)
}

func (x *Import2) formatType(t *Type, ctx *GenericContext, s Style, depth int) (string, error) {
	var b strings.Builder
	if err := x.writeType(&b, t, ctx, s, depth); err != nil {
		return "", err
	}
	return b.String(), nil
}

func (x *Import2) writeType(b *strings.Builder, t *Type, ctx *GenericContext, s Style, depth int) error {
	if t == nil {
		return fmt.Errorf("metadata: nil type")
	}
	if depth > 2*MaxSigDepth {
		return fmt.Errorf("metadata: type nested deeper than %d", 2*MaxSigDepth)
	}
	if b.Len() > maxFormatted {
		return fmt.Errorf("metadata: name longer than %d bytes", maxFormatted)
	}
	k := t.Kind
	switch {
	case k.IsPrimitive():
		b.WriteString(PrimitiveName(k, s))
	case k == ElementTypeClass || k == ElementTypeValuetype:
		n, err := x.typeTokenName(t.Token, ctx, s, depth)
		if err != nil {
			return err
		}
		b.WriteString(BuiltinName(n, s))
	case k == ElementTypeVar || k == ElementTypeMvar:
		b.WriteString(ctx.arg(k == ElementTypeMvar, t.Index))
	case k == ElementTypePtr || k == ElementTypeByref || k == ElementTypeSzarray:
		if err := x.writeType(b, t.Elem, ctx, s, depth+1); err != nil {
			return err
		}
		b.WriteString(map[ElementType]string{ElementTypePtr: "*", ElementTypeByref: "&", ElementTypeSzarray: "[]"}[k])
	case k == ElementTypePinned:
		if err := x.writeType(b, t.Elem, ctx, s, depth+1); err != nil {
			return err
		}
		b.WriteString(" pinned")
	case k == ElementTypeCmodReqd || k == ElementTypeCmodOpt:
		if err := x.writeType(b, t.Elem, ctx, s, depth+1); err != nil {
			return err
		}
		n, err := x.typeTokenName(t.Token, ctx, s, depth+1)
		if err != nil {
			return err
		}
		if k == ElementTypeCmodReqd {
			b.WriteString(" modreq(")
		} else {
			b.WriteString(" modopt(")
		}
		b.WriteString(n)
		b.WriteByte(')')
	case k == ElementTypeArray:
		if err := x.writeType(b, t.Elem, ctx, s, depth+1); err != nil {
			return err
		}
		var shape ArrayShape
		if t.Shape != nil {
			shape = *t.Shape
		}
		b.WriteString(FormatArrayShape(shape))
	case k == ElementTypeGenericinst:
		if t.Elem == nil {
			return fmt.Errorf("metadata: GENERICINST without a generic type")
		}
		args := make([]string, len(t.Args))
		for i, a := range t.Args {
			n, err := x.formatType(a, ctx, s, depth+1)
			if err != nil {
				return err
			}
			args[i] = n
		}
		n, err := x.typeDisplayName(t.Elem.Token, args)
		if err != nil {
			return err
		}
		b.WriteString(n)
	case k == ElementTypeFnptr:
		if t.Method == nil {
			return fmt.Errorf("metadata: FNPTR without a signature")
		}
		b.WriteString("method ")
		if err := x.writeType(b, t.Method.Return, ctx, s, depth+1); err != nil {
			return err
		}
		b.WriteString(" *")
		if err := x.writeParams(b, t.Method, ctx, s, depth+1); err != nil {
			return err
		}
	case k == ElementTypeInternal:
		fmt.Fprintf(b, "internal(%#x)", t.Handle)
	default:
		return fmt.Errorf("metadata: cannot name element type 0x%02x", byte(k))
	}
	return nil
}

func (x *Import2) writeParams(b *strings.Builder, m *MethodSig, ctx *GenericContext, s Style, depth int) error {
	b.WriteByte('(')
	for i, p := range m.Params {
		if i > 0 {
			b.WriteString(", ")
		}
		if err := x.writeType(b, p, ctx, s, depth); err != nil {
			return err
		}
	}
	if len(m.VarArgs) > 0 {
		if len(m.Params) > 0 {
			b.WriteString(", ")
		}
		b.WriteString("...")
		for _, p := range m.VarArgs {
			b.WriteString(", ")
			if err := x.writeType(b, p, ctx, s, depth); err != nil {
				return err
			}
		}
	} else if m.Kind() == ImageCeeCsCallconvVararg {
		if len(m.Params) > 0 {
			b.WriteString(", ")
		}
		b.WriteString("...")
	}
	b.WriteByte(')')
	return nil
}

// FormatParams formats a method signature's parameter list in ILAsm style:
// "(int32, string[])".
func (x *Import2) FormatParams(m *MethodSig, ctx *GenericContext) (string, error) {
	var b strings.Builder
	if err := x.writeParams(&b, m, ctx, ILAsm, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

// TypeDefDisplayName returns a TypeDef's name with its type arguments:
// "Ns.Outer+Nested<int,string>". args are the names of the arguments
// (already formatted); with nil args a generic type shows its parameter
// names ("Dictionary<TKey,TValue>"). For a type nested in a generic type
// the arguments are shared out along the nesting chain by the arity in
// each name ("Outer`1+Inner`1" with int, string gives
// "Outer<int>+Inner<string>"), the innermost type taking what is left.
func (x *Import2) TypeDefDisplayName(td Token, args []string) (string, error) {
	if args == nil {
		names, err := x.GenericParamNames(td)
		if err != nil {
			return "", err
		}
		args = names
	}
	chain, err := x.typeDefChain(td)
	if err != nil {
		return "", err
	}
	return distributeArgs(chain, args), nil
}

// typeDisplayName names a TypeDef or TypeRef instantiated with args (for a
// TypeSpec, args are ignored: it carries its own).
func (x *Import2) typeDisplayName(tk Token, args []string) (string, error) {
	switch TokenType(tk.Table()) {
	case MdtTypeDef:
		return x.TypeDefDisplayName(tk, args)
	case MdtTypeRef:
		chain, err := x.typeRefChain(tk)
		if err != nil {
			return "", err
		}
		return distributeArgs(chain, args), nil
	}
	return x.typeTokenName(tk, nil, ILAsm, 0)
}

// MethodName returns the name of a MethodDef, MemberRef or MethodSpec in
// the form Namespace.Type<T>.Method<U>(int32, string[]). For a MethodDef
// the generic parameters are shown by name; for a MemberRef whose parent
// is a TypeSpec and for a MethodSpec, the instantiation's arguments are
// shown (C# keywords) and substituted in the parameters.
func (x *Import2) MethodName(tk Token) (string, error) {
	switch TokenType(tk.Table()) {
	case MdtMethodDef:
		m, typeParams, owner, err := x.methodDefOwner(tk)
		if err != nil {
			return "", err
		}
		methodParams, err := x.GenericParamNames(tk)
		if err != nil {
			return "", err
		}
		return x.methodName(owner, m.Name, m.Sig, methodParams, &GenericContext{TypeArgs: typeParams, MethodArgs: methodParams})
	case MdtMemberRef:
		return x.memberRefName(tk, nil)
	case MdtMethodSpec:
		ms, err := x.MethodSpec(tk)
		if err != nil {
			return "", fmt.Errorf("metadata: method spec %v: %w", tk, err)
		}
		spec, err := ParseMethodSpec(ms.Sig)
		if err != nil {
			return "", fmt.Errorf("metadata: method spec %v: %w", tk, err)
		}
		if TokenType(ms.Method.Table()) == MdtMemberRef {
			return x.memberRefName(ms.Method, spec.Args)
		}
		m, typeParams, owner, err := x.methodDefOwner(ms.Method)
		if err != nil {
			return "", err
		}
		ctx := &GenericContext{TypeArgs: typeParams}
		margs, il, err := x.argNames(spec.Args, ctx)
		if err != nil {
			return "", err
		}
		ctx.MethodArgs = il
		return x.methodName(owner, m.Name, m.Sig, margs, ctx)
	}
	return "", fmt.Errorf("metadata: %v is not a method token", tk)
}

// methodDefOwner returns a MethodDef's properties, the names of its type's
// generic parameters and the type's name with them.
func (x *Import2) methodDefOwner(md Token) (m MethodInfo, typeParams []string, owner string, err error) {
	if m, err = x.Method(md); err != nil {
		return m, nil, "", fmt.Errorf("metadata: method %v: %w", md, err)
	}
	if typeParams, err = x.GenericParamNames(m.Class); err != nil {
		return m, nil, "", err
	}
	owner, err = x.TypeDefDisplayName(m.Class, typeParams)
	return m, typeParams, owner, err
}

// argNames formats type arguments twice: with C# keywords for an
// instantiation's arguments and with ILAsm's names for substituting them
// in parameters.
func (x *Import2) argNames(args []*Type, ctx *GenericContext) (cs, il []string, err error) {
	if cs, err = x.formatArgs(args, ctx, CSharp); err != nil {
		return nil, nil, err
	}
	if il, err = x.formatArgs(args, ctx, ILAsm); err != nil {
		return nil, nil, err
	}
	return cs, il, nil
}

func (x *Import2) formatArgs(args []*Type, ctx *GenericContext, s Style) ([]string, error) {
	out := make([]string, len(args))
	for i, a := range args {
		n, err := x.FormatType(a, ctx, s)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

func (x *Import2) memberRefName(mr Token, methodArgs []*Type) (string, error) {
	ref, err := x.MemberRef(mr)
	if err != nil {
		return "", fmt.Errorf("metadata: member reference %v: %w", mr, err)
	}
	ctx := &GenericContext{}
	var owner string
	switch TokenType(ref.Parent.Table()) {
	case MdtTypeSpec:
		blob, err := x.TypeSpec(ref.Parent)
		if err != nil {
			return "", err
		}
		t, err := ParseTypeSpec(blob)
		if err != nil {
			return "", fmt.Errorf("metadata: parent %v of %v: %w", ref.Parent, mr, err)
		}
		if t.Kind == ElementTypeGenericinst && t.Elem != nil {
			cs, il, err := x.argNames(t.Args, nil)
			if err != nil {
				return "", err
			}
			ctx.TypeArgs = il
			if owner, err = x.typeDisplayName(t.Elem.Token, cs); err != nil {
				return "", err
			}
		} else if owner, err = x.formatType(t, nil, ILAsm, 0); err != nil {
			return "", err
		}
	case MdtTypeDef, MdtTypeRef:
		if owner, err = x.typeTokenName(ref.Parent, nil, ILAsm, 0); err != nil {
			return "", err
		}
		owner = StripArity(owner)
	case MdtMethodDef:
		return x.MethodName(ref.Parent)
	default:
		owner = fmt.Sprintf("[%v]", ref.Parent)
	}
	var margs []string
	if methodArgs != nil {
		if margs, ctx.MethodArgs, err = x.argNames(methodArgs, ctx); err != nil {
			return "", err
		}
	}
	if len(ref.Sig) > 0 && CallingConvention(ref.Sig[0])&ImageCeeCsCallconvMask == ImageCeeCsCallconvField {
		return owner + "." + ref.Name, nil
	}
	return x.methodName(owner, ref.Name, ref.Sig, margs, ctx)
}

// methodName joins owner, name, the method's type arguments and its
// parameter list.
func (x *Import2) methodName(owner, name string, sig []byte, typeArgs []string, ctx *GenericContext) (string, error) {
	m, err := ParseMethodSig(sig)
	if err != nil {
		return "", fmt.Errorf("metadata: signature of %s.%s: %w", owner, name, err)
	}
	var b strings.Builder
	b.WriteString(owner)
	b.WriteByte('.')
	b.WriteString(name)
	if len(typeArgs) > 0 {
		b.WriteByte('<')
		b.WriteString(strings.Join(typeArgs, ","))
		b.WriteByte('>')
	} else if m.Generic() && m.GenericParams > 0 {
		b.WriteByte('<')
		for i := uint32(0); i < m.GenericParams && i < MaxSigCount; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(ctx.arg(true, i))
		}
		b.WriteByte('>')
	}
	if err := x.writeParams(&b, m, ctx, ILAsm, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

// FieldName returns "Namespace.Type.Field" for a FieldDef.
func (x *Import2) FieldName(fd Token) (string, error) {
	f, err := x.Field(fd)
	if err != nil {
		return "", fmt.Errorf("metadata: field %v: %w", fd, err)
	}
	owner, err := x.TypeDefDisplayName(f.Class, nil)
	if err != nil {
		return "", err
	}
	return owner + "." + f.Name, nil
}

// FieldTypeName returns the type of a FieldDef in ILAsm style, with its
// custom modifiers ("int32 modreq(System.Runtime.CompilerServices.IsVolatile)").
func (x *Import2) FieldTypeName(fd Token) (string, error) {
	f, err := x.Field(fd)
	if err != nil {
		return "", fmt.Errorf("metadata: field %v: %w", fd, err)
	}
	sig, err := ParseFieldSig(f.Sig)
	if err != nil {
		return "", fmt.Errorf("metadata: field %v: %w", fd, err)
	}
	typeParams, err := x.GenericParamNames(f.Class)
	if err != nil {
		return "", err
	}
	return x.FormatType(sig.Type, &GenericContext{TypeArgs: typeParams}, ILAsm)
}
