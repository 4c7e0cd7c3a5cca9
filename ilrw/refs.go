//go:build cgo

package ilrw

import (
	"fmt"

	"github.com/clrprof/clrprof/metadata"
)

// AssemblyRef returns the module's AssemblyRef to the assembly a, defining
// it if the module has none (see metadata.Emit2.EnsureAssemblyRef for what
// counts as the same assembly). The assembly must be one the runtime can
// load from the app's probing paths when the rewritten code first runs.
func (m *Module) AssemblyRef(a metadata.AssemblyName) (metadata.Token, error) {
	if err := m.writable(); err != nil {
		return 0, err
	}
	return m.Emit.EnsureAssemblyRef(a)
}

// TypeRef returns the module's TypeRef to namespace.name in scope (an
// AssemblyRef from AssemblyRef, or the TypeRef of the enclosing type),
// defining it if the module has none.
func (m *Module) TypeRef(scope metadata.Token, namespace, name string) (metadata.Token, error) {
	if err := m.writable(); err != nil {
		return 0, err
	}
	return m.Emit.EnsureTypeRef(scope, namespace, name)
}

// MemberRef returns the module's MemberRef to method or field name of
// parent with signature sig, defining it if the module has none.
func (m *Module) MemberRef(parent metadata.Token, name string, sig []byte) (metadata.Token, error) {
	if err := m.writable(); err != nil {
		return 0, err
	}
	return m.Emit.EnsureMemberRef(parent, name, sig)
}

// ExternalMethod returns a token for calling method name of type
// namespace.typeName in assembly a with signature sig, reusing or defining
// the AssemblyRef, TypeRef and MemberRef it takes: the operand of a call
// from this module into another assembly.
func (m *Module) ExternalMethod(a metadata.AssemblyName, namespace, typeName, name string, sig *metadata.MethodSig) (metadata.Token, error) {
	blob, err := sig.Encode()
	if err != nil {
		return 0, fmt.Errorf("ilrw: signature of %s.%s::%s: %w", namespace, typeName, name, err)
	}
	ar, err := m.AssemblyRef(a)
	if err != nil {
		return 0, fmt.Errorf("ilrw: reference to assembly %s: %w", a.Name, err)
	}
	tr, err := m.TypeRef(ar, namespace, typeName)
	if err != nil {
		return 0, fmt.Errorf("ilrw: reference to type %s: %w", metadata.JoinTypeName(namespace, typeName), err)
	}
	mr, err := m.MemberRef(tr, name, blob)
	if err != nil {
		return 0, fmt.Errorf("ilrw: reference to %s::%s: %w", metadata.JoinTypeName(namespace, typeName), name, err)
	}
	return mr, nil
}
