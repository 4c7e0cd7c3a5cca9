//go:build cgo

package ilrw

import (
	"fmt"
	"strings"

	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

// Module is the metadata of one loaded module as the rewriter needs it:
// method signatures for the stack analysis (it is a Resolver), token names
// for dumps (a Namer), and new tokens for signatures, strings and type
// specs. Not safe for concurrent use.
type Module struct {
	// ID is the runtime's ID of the module.
	ID profiler.ModuleID
	// Import reads the module's metadata.
	Import *metadata.Import2
	// Emit is nil until the first method that defines a token: opening a
	// module's metadata for writing costs the runtime a conversion, so a
	// module is only opened writable when a rewrite needs it.
	Emit *metadata.Emit2

	info *profiler.Info
	sigs map[metadata.Token]*metadata.MethodSig
}

// OpenModule opens a module's metadata for reading (and for writing when
// writable is set, else on the first definition of a token). Release it
// when done.
func OpenModule(info *profiler.Info, id profiler.ModuleID, writable bool) (*Module, error) {
	m := &Module{ID: id, info: info}
	if writable {
		if err := m.writable(); err != nil {
			return nil, err
		}
		return m, nil
	}
	imp, err := info.ModuleImport(id)
	if err != nil {
		return nil, err
	}
	m.Import = imp
	return m, nil
}

// Release releases the metadata interfaces.
func (m *Module) Release() {
	if m == nil {
		return
	}
	if m.Import != nil {
		m.Import.Release()
		m.Import = nil
	}
	if m.Emit != nil {
		m.Emit.Release()
		m.Emit = nil
	}
}

// MethodSig returns the signature of a MethodDef, MemberRef (the parent's
// signature for a MethodSpec) or StandAloneSig. The module keeps it for the
// next call: do not modify it.
func (m *Module) MethodSig(tok metadata.Token) (*metadata.MethodSig, error) {
	if s, ok := m.sigs[tok]; ok {
		return s, nil
	}
	blob, err := m.methodSigBlob(tok, 0)
	if err != nil {
		return nil, err
	}
	s, err := metadata.ParseMethodSig(blob)
	if err == nil && s.Kind() == metadata.ImageCeeCsCallconvProperty {
		err = &metadata.SigError{Offset: 0, Err: metadata.ErrSigMalformed, Detail: "a property's signature, not a method's"}
	}
	if err != nil {
		return nil, fmt.Errorf("signature of %v: %w", tok, err)
	}
	if m.sigs == nil {
		m.sigs = map[metadata.Token]*metadata.MethodSig{}
	}
	m.sigs[tok] = s
	return s, nil
}

// IsRuntimeAsync reports whether a MethodDef is runtime async (its
// implementation flags carry MethodImplAttributes.Async, 0x2000).
func (m *Module) IsRuntimeAsync(tok metadata.Token) (bool, error) {
	if table(tok) != tabMethodDef {
		return false, fmt.Errorf("ilrw: IsRuntimeAsync: %v is not a MethodDef", tok)
	}
	mi, err := m.Import.Method(tok)
	if err != nil {
		return false, fmt.Errorf("properties of %v: %w", tok, err)
	}
	return IsRuntimeAsync(mi.ImplFlags), nil
}

// ILSig returns the signature of a MethodDef as its body sees it (see
// ILSig): the declared one, with a runtime-async method's return type
// unwrapped. Do not modify it.
func (m *Module) ILSig(tok metadata.Token) (*metadata.MethodSig, error) {
	s, err := m.MethodSig(tok)
	if err != nil {
		return nil, err
	}
	if table(tok) != tabMethodDef {
		return nil, fmt.Errorf("ilrw: ILSig: %v is not a MethodDef", tok)
	}
	mi, err := m.Import.Method(tok)
	if err != nil {
		return nil, fmt.Errorf("properties of %v: %w", tok, err)
	}
	is, err := ILSig(s, mi.ImplFlags)
	if err != nil {
		return nil, fmt.Errorf("signature of %v: %w", tok, err)
	}
	return is, nil
}

// table returns a token's table number (0x06 for a MethodDef).
func table(t metadata.Token) uint32 { return uint32(t) >> 24 }

// Token tables.
const (
	tabTypeRef    = 0x01
	tabTypeDef    = 0x02
	tabField      = 0x04
	tabMethodDef  = 0x06
	tabMemberRef  = 0x0a
	tabModuleRef  = 0x1a
	tabStandAlone = 0x11
	tabTypeSpec   = 0x1b
	tabMethodSpec = 0x2b
	tabString     = 0x70
)

func (m *Module) methodSigBlob(tok metadata.Token, depth int) ([]byte, error) {
	switch table(tok) {
	case tabMethodDef:
		p, err := m.Import.GetMethodProps(tok)
		if err != nil {
			return nil, fmt.Errorf("GetMethodProps(%v): %w", tok, err)
		}
		return p.SigBlob, nil
	case tabMemberRef:
		_, sig, err := m.memberRef(tok)
		return sig, err
	case tabMethodSpec:
		if depth > 0 {
			break
		}
		p, err := m.Import.GetMethodSpecProps(tok)
		if err != nil {
			return nil, fmt.Errorf("GetMethodSpecProps(%v): %w", tok, err)
		}
		return m.methodSigBlob(p.Parent, depth+1)
	case tabStandAlone:
		sig, err := m.Import.GetSigFromToken(tok)
		if err != nil {
			return nil, fmt.Errorf("GetSigFromToken(%v): %w", tok, err)
		}
		return sig, nil
	}
	return nil, fmt.Errorf("ilrw: %v is not a method or signature token", tok)
}

func (m *Module) memberRef(tok metadata.Token) (metadata.ImportMemberRefPropsResult, []byte, error) {
	r, err := m.Import.GetMemberRefProps(tok)
	if err != nil {
		return r, nil, fmt.Errorf("GetMemberRefProps(%v): %w", tok, err)
	}
	return r, r.SigBlob, nil
}

// CallSite implements Resolver.
func (m *Module) CallSite(tok metadata.Token) (CallSite, error) {
	s, err := m.MethodSig(tok)
	if err != nil {
		return CallSite{}, err
	}
	return CallSiteOf(s), nil
}

// LocalSig returns the blob of a local variable signature token (nil for 0).
func (m *Module) LocalSig(tok metadata.Token) ([]byte, error) {
	if tok == 0 {
		return nil, nil
	}
	return m.Import.GetSigFromToken(tok)
}

// writable opens the module for writing if it is not yet, and reads it
// through the writable scope from then on, so that new tokens resolve.
func (m *Module) writable() error {
	if m.Emit != nil {
		return nil
	}
	if m.info == nil {
		return fmt.Errorf("ilrw: module %#x cannot be opened for writing", uint64(m.ID))
	}
	emit, err := m.info.ModuleEmit(m.ID)
	if err != nil {
		return err
	}
	imp, err := metadata.QueryImport2(emit)
	if err != nil {
		emit.Release()
		return fmt.Errorf("ilrw: module %#x: import interface: %w", uint64(m.ID), err)
	}
	if m.Import != nil {
		m.Import.Release()
	}
	m.Import, m.Emit = imp, emit
	return nil
}

// SigToken returns the StandAloneSig token of a signature blob, defining
// it if needed.
func (m *Module) SigToken(sig []byte) (metadata.Token, error) {
	if err := m.writable(); err != nil {
		return 0, err
	}
	if len(sig) == 0 {
		return 0, fmt.Errorf("ilrw: empty signature")
	}
	return m.Emit.GetTokenFromSig(sig)
}

// TypeSpec returns the TypeSpec token of an encoded type.
func (m *Module) TypeSpec(t []byte) (metadata.Token, error) {
	if err := m.writable(); err != nil {
		return 0, err
	}
	if len(t) == 0 {
		return 0, fmt.Errorf("ilrw: empty type")
	}
	return m.Emit.GetTokenFromTypeSpec(t)
}

// UserString returns a user string token (for ldstr) holding s.
func (m *Module) UserString(s string) (metadata.Token, error) {
	if err := m.writable(); err != nil {
		return 0, err
	}
	return m.Emit.DefineUserString(s)
}

// AddLocals appends locals of the given types to the body's local
// signature (see metadata.AppendLocals), stores the new signature's token
// in b.LocalVarSig and returns the index of the first new local.
func (m *Module) AddLocals(b *Body, types ...*metadata.Type) (int, error) {
	old, err := m.LocalSig(b.LocalVarSig)
	if err != nil {
		return 0, fmt.Errorf("ilrw: locals of the body (%v): %w", b.LocalVarSig, err)
	}
	sig, first, err := metadata.AppendLocals(old, types...)
	if err != nil {
		return 0, err
	}
	tok, err := m.SigToken(sig)
	if err != nil {
		return 0, err
	}
	b.LocalVarSig = tok
	return first, nil
}

// FindMethod finds a method by type name (namespace-qualified, nested
// types as Outer/Inner... not supported) and method name; the first
// overload found wins.
func (m *Module) FindMethod(typeName, method string) (metadata.Token, error) {
	td, err := m.Import.FindTypeDefByName(typeName, 0)
	if err != nil {
		return 0, fmt.Errorf("ilrw: type %s: %w", typeName, err)
	}
	tok, err := m.Import.FindMethod(td, method, nil)
	if err != nil {
		return 0, fmt.Errorf("ilrw: method %s.%s: %w", typeName, method, err)
	}
	return tok, nil
}

// TokenName implements Namer: a readable name for a token, e.g.
// "System.Console::WriteLine", "\"hello\"", "int32[]"; on failure the
// token in hex.
func (m *Module) TokenName(tok metadata.Token) string {
	n, err := m.tokenName(tok, 0)
	if err != nil || n == "" {
		return tok.String()
	}
	return n
}

func (m *Module) tokenName(tok metadata.Token, depth int) (string, error) {
	if depth > 4 {
		return tok.String(), nil
	}
	switch table(tok) {
	case tabTypeDef:
		p, err := m.Import.GetTypeDefProps(tok)
		if err != nil {
			return "", err
		}
		if outer, err := m.Import.GetNestedClassProps(tok); err == nil && !outer.IsNil() {
			o, _ := m.tokenName(outer, depth+1)
			return o + "/" + p.TypeDef, nil
		}
		return p.TypeDef, nil
	case tabTypeRef:
		p, err := m.Import.GetTypeRefProps(tok)
		if err != nil {
			return "", err
		}
		if table(p.ResolutionScope) == tabTypeRef {
			o, _ := m.tokenName(p.ResolutionScope, depth+1)
			return o + "/" + p.Name, nil
		}
		return p.Name, nil
	case tabTypeSpec:
		sig, err := m.Import.GetTypeSpecFromToken(tok)
		if err != nil {
			return "", err
		}
		return "typespec(" + hexBytes(sig) + ")", nil
	case tabMethodDef:
		p, err := m.Import.GetMethodProps(tok)
		if err != nil {
			return "", err
		}
		c, _ := m.tokenName(p.Class, depth+1)
		return c + "::" + p.Method, nil
	case tabField:
		p, err := m.Import.Field(tok)
		if err != nil {
			return "", err
		}
		c, _ := m.tokenName(p.Class, depth+1)
		return c + "::" + p.Name, nil
	case tabMemberRef:
		p, _, err := m.memberRef(tok)
		if err != nil {
			return "", err
		}
		c, _ := m.tokenName(p.Ptk, depth+1)
		return c + "::" + p.Member, nil
	case tabMethodSpec:
		p, err := m.Import.GetMethodSpecProps(tok)
		if err != nil {
			return "", err
		}
		c, _ := m.tokenName(p.Parent, depth+1)
		return c + "<" + hexBytes(p.SigBlob) + ">", nil
	case tabModuleRef:
		return m.Import.GetModuleRefProps(tok)
	case tabString:
		s, err := m.Import.GetUserString(tok)
		if err != nil {
			return "", err
		}
		return quoteIL(s), nil
	case tabStandAlone:
		sig, err := m.Import.GetSigFromToken(tok)
		if err != nil {
			return "", err
		}
		return "sig(" + hexBytes(sig) + ")", nil
	}
	return "", fmt.Errorf("no name for %v", tok)
}

func hexBytes(b []byte) string {
	var sb strings.Builder
	for i, c := range b {
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "%02x", c)
	}
	return sb.String()
}

// quoteIL quotes a string for a dump, cutting long ones.
func quoteIL(s string) string {
	r := []rune(s)
	if len(r) > 60 {
		return fmt.Sprintf("%q...", string(r[:60]))
	}
	return fmt.Sprintf("%q", s)
}
