package harness

import (
	"strings"
	"testing"
)

func TestCapBufferKeepsHeadAndTail(t *testing.T) {
	var b capBuffer
	half := outputLimit / 2
	chunk := strings.Repeat("x", 1<<20)
	b.Write([]byte("HEAD"))
	for written := 4; written < 3*outputLimit; written += len(chunk) {
		b.Write([]byte(chunk))
	}
	b.Write([]byte("TAIL"))
	s := b.String()
	if !strings.HasPrefix(s, "HEAD") || !strings.HasSuffix(s, "TAIL") {
		t.Fatalf("lost the head or the tail")
	}
	if !strings.Contains(s, "bytes dropped]") {
		t.Fatalf("no truncation note")
	}
	if len(s) > outputLimit+100 || len(s) < outputLimit {
		t.Fatalf("kept %d bytes, want about %d", len(s), outputLimit)
	}
	if len(b.head) != half {
		t.Fatalf("head %d bytes, want %d", len(b.head), half)
	}

	var small capBuffer
	small.Write([]byte("a\n"))
	small.Write([]byte("b\n"))
	if got := small.String(); got != "a\nb\n" {
		t.Fatalf("small output changed: %q", got)
	}
}
