package instr

import (
	"errors"
	"testing"

	"github.com/clrprof/clrprof/instr/target"
	"github.com/clrprof/clrprof/metadata"
)

// names is a TypeNamer over fixed tokens.
type names map[metadata.Token]string

func (n names) TypeDefName(t metadata.Token) (string, error) { return n.get(t) }
func (n names) TypeRefName(t metadata.Token) (string, error) { return n.get(t) }
func (n names) TypeSpec(t metadata.Token) ([]byte, error) {
	if t == 0x1B000001 { // List<int>
		return metadata.GenericInst(metadata.ClassType(0x01000002), metadata.Primitive(metadata.ElementTypeI4)).Encode()
	}
	return nil, errors.New("no such type spec")
}
func (n names) get(t metadata.Token) (string, error) {
	if s, ok := n[t]; ok {
		return s, nil
	}
	return "", errors.New("no such token")
}

func TestParamName(t *testing.T) {
	n := names{0x02000003: "Shop.Box`1+Inner", 0x01000002: "System.Collections.Generic.List`1", 0x01000004: "System.Guid"}
	i4 := metadata.Primitive(metadata.ElementTypeI4)
	cases := []struct {
		t    *metadata.Type
		want string
	}{
		{i4, "System.Int32"},
		{metadata.Primitive(metadata.ElementTypeString), "System.String"},
		{metadata.Primitive(metadata.ElementTypeI), "System.IntPtr"},
		{metadata.SZArrayOf(metadata.Primitive(metadata.ElementTypeObject)), "System.Object[]"},
		{&metadata.Type{Kind: metadata.ElementTypeArray, Elem: i4, Shape: &metadata.ArrayShape{Rank: 3}}, "System.Int32[,,]"},
		{metadata.ByRefTo(i4), "System.Int32&"},
		{metadata.PtrTo(metadata.Primitive(metadata.ElementTypeU1)), "System.Byte*"},
		{metadata.ValueType(0x01000004), "System.Guid"},
		{metadata.ClassType(0x02000003), "Shop.Box`1+Inner"},
		{metadata.GenericInst(metadata.ClassType(0x01000002), metadata.ClassType(0x02000003)), "System.Collections.Generic.List`1[Shop.Box`1+Inner]"},
		{metadata.ClassType(0x1B000001), "System.Collections.Generic.List`1[System.Int32]"},
		{&metadata.Type{Kind: metadata.ElementTypeVar, Index: 1}, "!1"},
		{metadata.ByRefTo(&metadata.Type{Kind: metadata.ElementTypeMvar, Index: 0}), "!!0&"},
		{&metadata.Type{Kind: metadata.ElementTypeCmodReqd, Token: 0x01000004, Elem: i4}, "System.Int32"},
		{metadata.ClassType(0x01000099), "?"},
	}
	for _, c := range cases {
		got := ParamName(n, c.t)
		if got != c.want {
			t.Errorf("ParamName = %q, want %q", got, c.want)
		}
		if got == "?" {
			continue
		}
		// A target's parameter list reads the name back unchanged.
		tg, err := target.Parse("A!T::M(" + got + ")")
		if err != nil || len(tg.Params) != 1 || tg.Params[0] != got {
			t.Errorf("the target syntax does not read %q back: %v %v", got, tg.Params, err)
		}
	}
}
