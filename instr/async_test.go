package instr

import (
	"testing"

	"github.com/clrprof/clrprof/metadata"
)

// generic decides whether DoneN can name a task's result type: not when
// it holds a generic parameter of the method or of its type, however deep.
func TestGenericResult(t *testing.T) {
	i4 := metadata.Primitive(metadata.ElementTypeI4)
	list := metadata.ClassType(0x01000005)
	for _, c := range []struct {
		t    *metadata.Type
		want bool
	}{
		{i4, false},
		{metadata.ClassType(0x01000002), false},
		{metadata.GenericInst(list, i4), false},
		{&metadata.Type{Kind: metadata.ElementTypeVar}, true},
		{&metadata.Type{Kind: metadata.ElementTypeMvar, Index: 1}, true},
		{metadata.SZArrayOf(&metadata.Type{Kind: metadata.ElementTypeMvar}), true},
		{metadata.GenericInst(list, metadata.GenericInst(list, &metadata.Type{Kind: metadata.ElementTypeVar})), true},
		{nil, false},
	} {
		if got := generic(c.t); got != c.want {
			t.Errorf("generic(%+v) = %v, want %v", c.t, got, c.want)
		}
	}
}
