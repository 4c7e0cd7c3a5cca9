package typeref

import (
	"slices"
	"testing"

	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

func TestRankModules(t *testing.T) {
	key := []byte{0xb7, 0x7a, 0x5c, 0x56, 0x19, 0x34, 0xe0, 0x89}
	other := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	v4 := metadata.Version{Major: 4}
	v5 := metadata.Version{Major: 5}
	ar := metadata.AssemblyRefInfo{Name: "Lib", Version: v4, PublicKeyOrToken: key}
	mods := []profiler.ModuleID{1, 2, 3, 4, 5, 6, 7}
	asms := []*moduleAssembly{
		{ok: true, name: "lib", version: v5, pkt: key},   // name + key
		{ok: true, name: "Lib", version: v4, pkt: other}, // name (+ version, wrong key)
		{ok: true, name: "Other", version: v4, pkt: key}, // wrong name
		{ok: true, name: "LIB", version: v4, pkt: key},   // name + key + version
		nil, // no manifest read
		{ok: false, name: "Lib"},
		{ok: true, name: "Lib", version: v4, pkt: nil}, // name, no key
	}
	got := rankModules(ar, mods, asms)
	if want := []profiler.ModuleID{4, 1, 2, 7}; !slices.Equal(got, want) {
		t.Errorf("rankModules = %v, want %v", got, want)
	}
	// A reference without a key token prefers key-less assemblies.
	ar = metadata.AssemblyRefInfo{Name: "Lib", Version: v4}
	if got, want := rankModules(ar, mods, asms), []profiler.ModuleID{7, 1, 2, 4}; !slices.Equal(got, want) {
		t.Errorf("rankModules without key = %v, want %v", got, want)
	}
	// A full public key in the reference is compared by its token.
	full := []byte{0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0} // the ECMA key, token b77a5c561934e089
	ar = metadata.AssemblyRefInfo{Name: "Lib", Version: v4, PublicKeyOrToken: full, Flags: 1}
	if got, want := rankModules(ar, mods, asms), []profiler.ModuleID{4, 1, 2, 7}; !slices.Equal(got, want) {
		t.Errorf("rankModules with a full key = %v, want %v", got, want)
	}
}
