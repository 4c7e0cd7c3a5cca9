package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	c, err := parseConfig([]byte(" seconds=0.5  out=/tmp/x top=3 "))
	if err != nil || c.duration != 500*time.Millisecond || c.out != "/tmp/x" || c.top != 3 {
		t.Fatalf("%+v %v", c, err)
	}
	if c, err := parseConfig(nil); err != nil || c.duration != 10*time.Second || c.top != 20 || c.out != "" {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	for _, bad := range []string{"seconds", "seconds=0", "seconds=x", "seconds=-1", "top=-2", "colour=red"} {
		if _, err := parseConfig([]byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "attachjit: ") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestWriteReport(t *testing.T) {
	var b bytes.Buffer
	writeReport(&b, 7, "detaching", 1500*time.Millisecond, 6, map[string]int{"A.x": 1, "B.y": 3, "A.w": 1, "C.z": 1}, 2)
	want := "attachjit: pid 7, detaching after 1.5s: 6 JIT compilations of 4 methods\n" +
		"       3  B.y\n" +
		"       1  A.w\n" +
		"  ... 2 more\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}
