package procstat

import (
	"os"
	"strings"
	"testing"
)

const smapsSample = `55d0c4a00000-55d0c4a21000 r--p 00000000 fe:00 123 /usr/bin/my prog
Size:                132 kB
Rss:                 128 kB
Pss:                 128 kB
Anonymous:             8 kB
VmFlags: rd mr mw me dw sd
7f00aa000000-7f00ab000000 rw-p 00000000 00:00 0
Size:              16384 kB
Rss:                2048 kB
Anonymous:          2048 kB
7ffd1c1f0000-7ffd1c211000 rw-p 00000000 00:00 0                          [stack]
Size:                132 kB
Rss:                  12 kB
`

func TestParseSmaps(t *testing.T) {
	ms, err := ParseSmaps(strings.NewReader(smapsSample))
	if err != nil {
		t.Fatal(err)
	}
	want := []Mapping{
		{0x55d0c4a00000, 0x55d0c4a21000, "/usr/bin/my prog", 128 << 10, 8 << 10},
		{0x7f00aa000000, 0x7f00ab000000, "", 2048 << 10, 2048 << 10},
		{0x7ffd1c1f0000, 0x7ffd1c211000, "[stack]", 12 << 10, 0},
	}
	if len(ms) != len(want) {
		t.Fatalf("%d mappings %+v, want %d", len(ms), ms, len(want))
	}
	for i := range want {
		if ms[i] != want[i] {
			t.Errorf("mapping %d: %+v, want %+v", i, ms[i], want[i])
		}
	}
}

// The test binary's own smaps: its file is mapped and resident, and some
// of its memory (the Go heap at least) is anonymous.
func TestParseSmapsSelf(t *testing.T) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	ms, err := ParseSmaps(f)
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	var self, total, anon uint64
	for _, m := range ms {
		total += m.RSS
		anon += m.Anon
		if m.Path == exe {
			self += m.RSS
		}
		if m.Anon > m.RSS {
			t.Errorf("%+v: more anonymous than resident", m)
		}
	}
	if self == 0 || total < self {
		t.Errorf("%d mappings: the executable %s has %d bytes resident of %d", len(ms), exe, self, total)
	}
	if anon == 0 { // the Go heap, at least
		t.Errorf("%d mappings: no anonymous memory", len(ms))
	}
}

// ParseSmaps never fails on any input and keeps every mapping's range as
// written.
func FuzzParseSmaps(f *testing.F) {
	f.Add([]byte(smapsSample))
	f.Add([]byte("0-1 r 0 0 0\nRss: 4 kB\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ms, err := ParseSmaps(strings.NewReader(string(b)))
		if err != nil {
			return // a line longer than the scanner takes
		}
		for _, m := range ms {
			if strings.ContainsAny(m.Path, "\n") {
				t.Errorf("path %q holds a newline", m.Path)
			}
		}
	})
}
