package profiler_test

import (
	"debug/elf"
	"testing"
)

// TestLibraryBindsNow: a profiler library is linked with -z now, so the
// dynamic linker binds every symbol it uses when it loads it and never
// runs its lazy resolver inside one of the library's signal handlers (the
// SIGSEGV router calls memcpy there; see shim.go).
func TestLibraryBindsNow(t *testing.T) {
	f, err := elf.Open(countprof(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	flags, err := f.DynValue(elf.DT_FLAGS)
	if err != nil {
		t.Fatal(err)
	}
	flags1, err := f.DynValue(elf.DT_FLAGS_1)
	if err != nil {
		t.Fatal(err)
	}
	now := false
	for _, v := range flags {
		now = now || v&uint64(elf.DF_BIND_NOW) != 0
	}
	for _, v := range flags1 {
		now = now || v&uint64(elf.DF_1_NOW) != 0
	}
	if !now {
		t.Errorf("DT_FLAGS %#x, DT_FLAGS_1 %#x: no BIND_NOW; symbols are bound lazily", flags, flags1)
	}
}
