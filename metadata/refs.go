package metadata

// References from one module to types and members of another assembly,
// for rewrites that call out of the module: the AssemblyRef, TypeRef and
// MemberRef rows are reused when the module has them already, defined
// otherwise.

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	com "github.com/clrprof/clrprof/internal/com"
)

// #include <stdlib.h>
// #include <string.h>
import "C"

// AssemblyName names an assembly for a reference. Name is required;
// a nil PublicKeyToken references an assembly without a strong name.
type AssemblyName struct {
	// Name is the assembly's simple name.
	Name string
	// Version is the assembly's version.
	Version        Version
	Culture        string // "" for neutral
	PublicKeyToken []byte // 8 bytes, or nil
}

// NameOf returns the name another module uses to reference this
// assembly (with the token of its public key).
func (a AssemblyInfo) NameOf() AssemblyName {
	return AssemblyName{Name: a.Name, Version: a.Version, PublicKeyToken: a.PublicKeyToken()}
}

// DefineAssemblyRef defines a new AssemblyRef (even when an equal one
// exists; [Emit2.EnsureAssemblyRef] reuses it).
func (x *AssemblyEmit) DefineAssemblyRef(a AssemblyName, flags AssemblyFlags) (Token, error) {
	if x == nil || x.p == nil {
		return 0, com.NilObject("IMetaDataAssemblyEmit")
	}
	if a.Name == "" {
		return 0, errors.New("metadata: DefineAssemblyRef: no name")
	}
	md, free := assemblyMetadata(a)
	defer free()
	return x.defineAssemblyRef(a.PublicKeyToken, a.Name, unsafe.Pointer(&md), nil, uint32(flags&^afPublicKey))
}

// assemblyMetadata lays a's version and culture out as ASSEMBLYMETADATA.
// The struct is read by the runtime during the call; the locale it points
// to must not be Go memory (a Go pointer inside memory passed to C), so it
// is copied to C memory, freed by free.
func assemblyMetadata(a AssemblyName) (md AssemblyMetadata, free func()) {
	md = AssemblyMetadata{MajorVersion: a.Version.Major, MinorVersion: a.Version.Minor,
		BuildNumber: a.Version.Build, RevisionNumber: a.Version.Revision}
	if a.Culture == "" {
		return md, func() {}
	}
	u := append(encodeUTF16Len(a.Culture), 0)
	p := C.malloc(C.size_t(2 * len(u)))
	C.memcpy(p, unsafe.Pointer(&u[0]), C.size_t(2*len(u)))
	md.Locale = Address(uintptr(p))
	md.LocaleLen = uint32(len(u))
	return md, func() { C.free(p) }
}

// SetAssemblyRefProps changes an AssemblyRef (its PublicKeyToken field is
// the token, never a full key).
func (x *AssemblyEmit) SetAssemblyRefProps(ar Token, a AssemblyName, flags AssemblyFlags) error {
	if x == nil || x.p == nil {
		return com.NilObject("IMetaDataAssemblyEmit")
	}
	md, free := assemblyMetadata(a)
	defer free()
	return x.setAssemblyRefProps(ar, a.PublicKeyToken, a.Name, unsafe.Pointer(&md), nil, uint32(flags&^afPublicKey))
}

// DefineAssembly defines the scope's Assembly row (a new scope's manifest):
// its name, version and culture, the full public key (nil for none) and
// the hash algorithm (0x8004, SHA1, is what compilers write).
func (x *AssemblyEmit) DefineAssembly(a AssemblyName, publicKey []byte, hashAlg uint32, flags AssemblyFlags) (Token, error) {
	if x == nil || x.p == nil {
		return 0, com.NilObject("IMetaDataAssemblyEmit")
	}
	md, free := assemblyMetadata(a)
	defer free()
	return x.defineAssembly(publicKey, hashAlg, a.Name, unsafe.Pointer(&md), uint32(flags))
}

// SetAssemblyProps changes the Assembly row.
func (x *AssemblyEmit) SetAssemblyProps(asm Token, a AssemblyName, publicKey []byte, hashAlg uint32, flags AssemblyFlags) error {
	if x == nil || x.p == nil {
		return com.NilObject("IMetaDataAssemblyEmit")
	}
	md, free := assemblyMetadata(a)
	defer free()
	return x.setAssemblyProps(asm, publicKey, hashAlg, a.Name, unsafe.Pointer(&md), uint32(flags))
}

// EnsureAssemblyRef returns the module's AssemblyRef to a, defining it if
// the module has none. An existing reference is reused when its name is
// the same (ignoring case, as the runtime binds names) and, if a names a
// public key token, its token is the same; its version is not compared
// (the runtime binds one assembly of a name per load context).
func (x *Emit2) EnsureAssemblyRef(a AssemblyName) (Token, error) {
	if x == nil || x.p == nil {
		return 0, nilEmit2()
	}
	ai, err := QueryAssemblyImport(x)
	if err != nil {
		return 0, err
	}
	defer ai.Release()
	refs, err := ai.AssemblyRefs()
	if err != nil {
		return 0, err
	}
	for _, r := range refs {
		info, err := ai.AssemblyRef(r)
		if err != nil {
			return 0, err
		}
		if strings.EqualFold(info.Name, a.Name) && (a.PublicKeyToken == nil || bytes.Equal(info.PublicKeyToken(), a.PublicKeyToken)) {
			return r, nil
		}
	}
	ae, err := QueryAssemblyEmit(x)
	if err != nil {
		return 0, err
	}
	defer ae.Release()
	return ae.DefineAssemblyRef(a, 0)
}

// EnsureTypeRef returns the TypeRef to namespace.name in scope (an
// AssemblyRef, a ModuleRef, or the TypeRef of the enclosing type for a
// nested type), defining it if the module has none.
func (x *Emit2) EnsureTypeRef(scope Token, namespace, name string) (Token, error) {
	if x == nil || x.p == nil {
		return 0, nilEmit2()
	}
	imp, err := QueryImport2(x)
	if err != nil {
		return 0, err
	}
	defer imp.Release()
	full := JoinTypeName(namespace, name)
	tr, err := imp.FindTypeRef(scope, full)
	if err == nil {
		return tr, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return 0, fmt.Errorf("metadata: find TypeRef %s: %w", full, err)
	}
	return x.DefineTypeRefByName(scope, full)
}

// EnsureMemberRef returns the MemberRef to the method or field name with
// signature sig (see [MethodSig.Encode]) of parent (a TypeRef, TypeSpec
// or ModuleRef), defining it if the module has none.
func (x *Emit2) EnsureMemberRef(parent Token, name string, sig []byte) (Token, error) {
	if x == nil || x.p == nil {
		return 0, nilEmit2()
	}
	imp, err := QueryImport2(x)
	if err != nil {
		return 0, err
	}
	defer imp.Release()
	mr, err := imp.FindMemberRef(parent, name, sig)
	if err == nil {
		return mr, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return 0, fmt.Errorf("metadata: find MemberRef %s: %w", name, err)
	}
	return x.DefineMemberRef(parent, name, sig)
}

// maxFound bounds how many assemblies FindAssembliesByName returns.
const maxFound = 64

// FindAssembliesByName asks the runtime for the assemblies of a name
// under appBase and privateBin (either may be ""), each as an owned
// AssemblyImport. CoreCLR does not implement the search (every runtime
// from .NET Core 2.0 to .NET 8 answers COR_E_NOTSUPPORTED, seen in
// TestRuntimeDispenser); use [Dispenser.OpenAssemblyImport] with a path.
func (x *AssemblyImport) FindAssembliesByName(appBase, privateBin, name string) ([]*AssemblyImport, error) {
	if x == nil || x.p == nil {
		return nil, com.NilObject("IMetaDataAssemblyImport")
	}
	var found [maxFound]unsafe.Pointer
	n, err := x.findAssembliesByName(appBase, privateBin, name, unsafe.Pointer(&found[0]), maxFound)
	if err != nil {
		return nil, err
	}
	var out []*AssemblyImport
	for _, p := range found[:min(int(n), maxFound)] {
		if p == nil {
			continue
		}
		unk := com.OwnUnknown(p)
		ai, err := QueryAssemblyImport(unk)
		unk.Release()
		if err != nil {
			for _, a := range out {
				a.Release()
			}
			return nil, err
		}
		out = append(out, ai)
	}
	return out, nil
}
