package async

import (
	"testing"
	"time"
)

func TestFigureAndParseCalls(t *testing.T) {
	out := "before 2\nDelayThenValue calls=51 sum=2550 mean_ms=20.500\nThrowAfterAwait calls=51 thrown=51\ndone\n"
	if d, err := DelayMean(out); err != nil || d != 20500*time.Microsecond {
		t.Errorf("DelayMean: %v, %v", d, err)
	}
	if v, err := Figure(out, "ThrowAfterAwait", "thrown"); err != nil || v != 51 {
		t.Errorf("Figure thrown: %v, %v", v, err)
	}
	if _, err := Figure(out, "CatchAround", "caught"); err == nil {
		t.Error("Figure of a missing line: no error")
	}
	data := []byte(`{"method":"A","thread":1,"depth":1,"dur_ns":30}
{"method":"A","thread":2,"depth":1,"dur_ns":10,"exception":"System.InvalidOperationException"}
{"method":"B","thread":1,"depth":2,"dur_ns":5}
`)
	calls, per, err := ParseCalls(data)
	if err != nil || len(calls) != 3 {
		t.Fatalf("ParseCalls: %d calls, %v", len(calls), err)
	}
	a := per["A"]
	if a.Calls != 2 || a.Exceptions != 1 || a.Min != 10 || a.Total != 40 || a.Mean() != 20 || len(a.Threads) != 2 {
		t.Errorf("A: %+v", a)
	}
	if _, _, err := ParseCalls([]byte("{\n")); err == nil {
		t.Error("ParseCalls of a broken line: no error")
	}
	if w := Want()["ThrowAfterAwait"]; w != [2]int{102, 102} {
		t.Errorf("Want() ThrowAfterAwait %v", w)
	}
}
