package ilrw

import "github.com/clrprof/clrprof/metadata"

// Signatures are decoded and encoded by package metadata
// (metadata.ParseMethodSig, metadata.AppendLocals, the *metadata.Type
// tree); these are the few facts about them that the stack analysis and
// the rewrites need.

// CallSiteOf returns what a call of a method with signature s does to the
// stack: every parameter (varargs included) is popped, and the object too
// for an instance method whose this is not an explicit parameter; a value
// is pushed unless the method returns void.
func CallSiteOf(s *metadata.MethodSig) CallSite {
	return CallSite{
		Params:       len(s.Params) + len(s.VarArgs),
		HasThis:      s.HasThis() && !s.ExplicitThis(),
		ReturnsValue: !returnsVoid(s.Return),
	}
}

// returnsVoid reports whether a return type is void, under any custom
// modifiers.
func returnsVoid(t *metadata.Type) bool {
	inner, _, pinned := t.Unwrap()
	return !pinned && inner != nil && inner.Kind == metadata.ElementTypeVoid
}

// classifyType reports whether a type is certainly a reference type (no
// box needed to pass it as object), and whether it is a byref, pointer or
// typedref that cannot be boxed at all.
func classifyType(t *metadata.Type) (ref, unboxable bool) {
	inner, _, pinned := t.Unwrap()
	if pinned || inner == nil {
		return false, true
	}
	switch inner.Kind {
	case metadata.ElementTypeString, metadata.ElementTypeObject, metadata.ElementTypeClass,
		metadata.ElementTypeSzarray, metadata.ElementTypeArray:
		return true, false
	case metadata.ElementTypeGenericinst:
		return inner.Elem != nil && inner.Elem.Kind == metadata.ElementTypeClass, false
	case metadata.ElementTypeByref, metadata.ElementTypePtr, metadata.ElementTypeTypedbyref,
		metadata.ElementTypeFnptr, metadata.ElementTypeVoid:
		return false, true
	}
	return false, false
}
