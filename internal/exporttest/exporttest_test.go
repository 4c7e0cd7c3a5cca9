package exporttest

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

func record(body string) []byte {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(body)))
	return append(n[:], body...)
}

// A file a killed receiver left with a record cut short is cut after its
// last whole record, so that what the next receiver appends is read as
// it was written.
func TestTruncateTorn(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		tail []byte
	}{
		{"body cut", record("third record")[:9]},
		{"length cut", []byte{0, 0}},
		{"whole", nil},
	} {
		f := filepath.Join(dir, tc.name)
		whole := append(record("first"), record("second")...)
		if err := os.WriteFile(f, append(append([]byte{}, whole...), tc.tail...), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := TruncateTorn(f); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(f)
		if !bytes.Equal(got, whole) {
			t.Errorf("%s: %q after truncating, want %q", tc.name, got, whole)
		}
	}
	if err := TruncateTorn(filepath.Join(dir, "none")); err != nil {
		t.Errorf("a file that does not exist: %v", err)
	}
	f := filepath.Join(dir, "lines")
	os.WriteFile(f, []byte("a=1\nb=2\nc="), 0o644)
	if err := truncateTornLine(f); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(f); string(got) != "a=1\nb=2\n" {
		t.Errorf("lines: %q", got)
	}
}
