package harness

import (
	"slices"
	"testing"
)

// TestAsyncBuilds checks which builds each runtime family gets and what
// each build's options and environment do.
func TestAsyncBuilds(t *testing.T) {
	for _, tc := range []struct {
		major  int
		names  []string
		roslyn string
		raEnv  []string
	}{
		{3, []string{"classic"}, "", nil},
		{8, []string{"classic"}, "", nil},
		{10, []string{"classic", "runtime-async"}, "net10.0", []string{"DOTNET_RuntimeAsync=1"}},
		{11, []string{"classic", "runtime-async"}, "net11.0", nil},
	} {
		rt := Runtime{Name: "test", Major: tc.major}
		bs := AsyncBuilds(rt, Unsafe())
		var names []string
		for _, b := range bs {
			names = append(names, b.Name)
			var c csConfig
			for _, o := range b.Options {
				o(&c)
			}
			if c.roslyn != tc.roslyn || c.runtimeAsync != b.RuntimeAsync || !c.unsafe {
				t.Errorf(".NET %d %s: config %+v, want roslyn %q, runtime async %v, unsafe", tc.major, b.Name, c, tc.roslyn, b.RuntimeAsync)
			}
			if b.RuntimeAsync != (b.Name == "runtime-async") {
				t.Errorf(".NET %d %s: RuntimeAsync %v", tc.major, b.Name, b.RuntimeAsync)
			}
			wantEnv := []string(nil)
			if b.RuntimeAsync {
				wantEnv = tc.raEnv
			}
			if !slices.Equal(b.Env, wantEnv) {
				t.Errorf(".NET %d %s: env %q, want %q", tc.major, b.Name, b.Env, wantEnv)
			}
		}
		if !slices.Equal(names, tc.names) {
			t.Errorf(".NET %d: builds %q, want %q", tc.major, names, tc.names)
		}
	}
}
