package csgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck: a stamp written for the sources passes; a changed source, a
// changed argument or a missing stamp fails.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	src, out := filepath.Join(dir, "a.cs"), filepath.Join(dir, "a.dll")
	if err := os.WriteFile(src, []byte("class A {}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, []byte("MZ"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-unsafe"}
	if err := Check(out, args, []string{src}); err == nil {
		t.Fatal("no stamp: want an error")
	}
	sum, err := Hash(args, []string{src})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out+StampSuffix, []byte(sum+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Check(out, args, []string{src}); err != nil {
		t.Fatalf("fresh: %v", err)
	}
	if err := Check(out, nil, []string{src}); err == nil || !strings.Contains(err.Error(), "stale") {
		t.Fatalf("other arguments: want stale, got %v", err)
	}
	if err := os.WriteFile(src, []byte("class B {}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Check(out, args, []string{src}); err == nil || !strings.Contains(err.Error(), "stale") {
		t.Fatalf("changed source: want stale, got %v", err)
	}
}
