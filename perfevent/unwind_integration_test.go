//go:build linux && amd64

package perfevent

import (
	"bufio"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/harness"
)

// symbolizer names the functions of one ELF file mapped into a process.
type symbolizer struct {
	syms []elf.Symbol // functions, by address
	bias uint64
}

func newSymbolizer(t *testing.T, path string, maps []mapping) *symbolizer {
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	z := &symbolizer{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
			z.syms = append(z.syms, s)
		}
	}
	sort.Slice(z.syms, func(i, j int) bool { return z.syms[i].Value < z.syms[j].Value })
	o := loadCFI(path)
	if o == nil {
		t.Fatalf("%s: no call frame information", path)
	}
	for i := range maps {
		if maps[i].file == path {
			if b, ok := o.bias(&maps[i]); ok {
				z.bias = b
				return z
			}
		}
	}
	t.Fatalf("%s is not mapped", path)
	return nil
}

// name is the function holding address a of the process ("" if none).
func (z *symbolizer) name(a uint64) string {
	a -= z.bias
	i := sort.Search(len(z.syms), func(i int) bool { return z.syms[i].Value > a }) - 1
	if i < 0 || a >= z.syms[i].Value+z.syms[i].Size {
		return ""
	}
	return z.syms[i].Name
}

// A C program compiled without frame pointers (testdata/spin.c) spins seven
// calls deep, each caller keeping a frame of its own size (8000, 136 and
// 2400 bytes of locals), rbp used as an ordinary register. Sampled with
// StackBytes, every sample unwinds through spin, the three levels and their
// wrappers, and main to the C library's start and the program's _start,
// whose CFI marks the outermost frame. The kernel's frame-pointer chain
// cannot follow this program at all: the same program sampled without
// StackBytes is logged for comparison.
//
// With "signal", the spinning happens in a signal handler raised from
// level3w: every sample must unwind through the handler, the kernel's
// signal frame (the C library's trampoline, the interrupted registers read
// from the ucontext) and on through level3w to _start.
func TestUnwindWithoutFramePointers(t *testing.T) {
	harness.Integration(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "spin")
	if out, err := exec.Command("gcc", "-O2", "-fomit-frame-pointer", "-o", bin, "testdata/spin.c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	t.Run("plain", func(t *testing.T) {
		unwindChild(t, bin, nil, []string{"spin", "level3w", "level3", "level2w", "level2", "level1w", "level1", "main"})
	})
	t.Run("signal", func(t *testing.T) {
		unwindChild(t, bin, []string{"signal"}, []string{"spin", "handler", "level3w", "level3", "level2w", "level2", "level1w", "level1", "main"})
	})
}

// unwindChild runs the program and checks that nearly every sample's
// stack names the functions of want in that order (others, in the C
// library, may come between) and ends at _start.
func unwindChild(t *testing.T, bin string, args, want []string) {
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	tid, err := strconv.ParseUint(strings.TrimSpace(line), 10, 32)
	if err != nil {
		t.Fatal(err)
	}
	mapsPath := fmt.Sprintf("/proc/%d/maps", cmd.Process.Pid)
	mb, err := os.ReadFile(mapsPath)
	if err != nil {
		t.Fatal(err)
	}
	z := newSymbolizer(t, bin, parseMaps(mb))

	sample := func(stackBytes int) (n, full, outermost int, first []string, c Stats) {
		s, err := New(Options{Period: 2 * time.Millisecond, StackBytes: stackBytes, RingPages: 256})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		s.exec.path = mapsPath // the child's mappings, not the test's
		if err := s.Add(uint32(tid)); err != nil {
			t.Skipf("perf events not available here: %v", err)
		}
		add := func(smp Sample) {
			n++
			var names []string
			for i, a := range smp.Stack {
				if i > 0 {
					a-- // a return address: inside the call (spin never returns, so its callers' calls end them)
				}
				names = append(names, z.name(a))
			}
			if first == nil {
				first = names
			}
			if inOrder(names, want) {
				full++
				if !smp.Short && !smp.Stopped && !smp.Broken && !smp.Truncated && names[len(names)-1] == "_start" {
					outermost++
				}
			}
		}
		for i := 0; i < 10; i++ {
			time.Sleep(30 * time.Millisecond)
			s.Drain(add)
		}
		return n, full, outermost, first, s.Stats()
	}

	n, full, outermost, first, c := sample(16384)
	t.Logf("with StackBytes: %d samples, %d through spin..main, %d of them ending at _start; first %q; counts %+v", n, full, outermost, first, c)
	if n < 20 || full < n*95/100 || outermost < full*95/100 || c.Lost != 0 {
		t.Errorf("want about 150 samples (at least 20 on a loaded machine), nearly all unwound through %q to _start", want)
	}
	kn, kfull, _, kfirst, kc := sample(0)
	t.Logf("kernel frame-pointer chains: %d samples, %d through spin..main; first %q; counts %+v", kn, kfull, kfirst, kc)
}

// inOrder says whether names holds want in that order, with the first of
// want first and unnamed (other files') functions allowed between.
func inOrder(names, want []string) bool {
	if len(names) == 0 || len(want) == 0 || names[0] != want[0] {
		return false
	}
	i := 0
	for _, n := range names {
		switch {
		case i == len(want):
			return true // what follows the last (main): the C library's start, _start
		case n == want[i]:
			i++
		case n != "":
			return false
		}
	}
	return i == len(want)
}
