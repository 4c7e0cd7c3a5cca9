package profiler_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/profiler"
)

type voter struct {
	profiler.Base
	answer bool
	err    error
	panics bool
	calls  *[]string
	name   string
}

func (v *voter) JITInlining(profiler.FunctionID, profiler.FunctionID) (bool, error) {
	*v.calls = append(*v.calls, v.name)
	if v.panics {
		panic("voter panics")
	}
	return v.answer, v.err
}

func (v *voter) ThreadCreated(profiler.ThreadID) error {
	*v.calls = append(*v.calls, v.name)
	if v.panics {
		panic("voter panics")
	}
	return v.err
}

// TestComposeRules checks the combination rules without a runtime:
// members are called in order, a "no" wins, a failing or panicking member
// has no vote and does not stop the others, the first error is the
// callback's.
func TestComposeRules(t *testing.T) {
	var calls []string
	mk := func(name string, answer bool, err error, panics bool) *voter {
		return &voter{name: name, answer: answer, err: err, panics: panics, calls: &calls}
	}
	errX := errors.New("x")
	for _, tc := range []struct {
		name    string
		members []*voter
		want    bool
		wantErr bool
		order   string
	}{
		{"both yes", []*voter{mk("a", true, nil, false), mk("b", true, nil, false)}, true, false, "a,b"},
		{"second says no", []*voter{mk("a", true, nil, false), mk("b", false, nil, false)}, false, false, "a,b"},
		{"first says no", []*voter{mk("a", false, nil, false), mk("b", true, nil, false)}, false, false, "a,b"},
		{"first panics, second no", []*voter{mk("a", true, nil, true), mk("b", false, nil, false)}, false, false, "a,b"},
		{"first fails, second no", []*voter{mk("a", false, errX, false), mk("b", false, nil, false)}, false, false, "a,b"},
		{"all fail", []*voter{mk("a", false, errX, false), mk("b", false, nil, true)}, true, true, "a,b"},
	} {
		calls = nil
		ms := make([]profiler.Callback, len(tc.members))
		for i, m := range tc.members {
			ms[i] = m
		}
		c, err := profiler.Compose(ms...)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.JITInlining(1, 2)
		if got != tc.want || (err != nil) != tc.wantErr || strings.Join(calls, ",") != tc.order {
			t.Errorf("%s: JITInlining = %v, %v (calls %v); want %v, error %v, calls %s", tc.name, got, err, calls, tc.want, tc.wantErr, tc.order)
		}
	}

	calls = nil
	c, _ := profiler.Compose(mk("a", false, errX, false), mk("b", false, nil, true), mk("c", false, errors.New("y"), false))
	if err := c.ThreadCreated(1); !errors.Is(err, errX) || strings.Join(calls, ",") != "a,b,c" {
		t.Errorf("ThreadCreated = %v (calls %v); want the first error and every member called", err, calls)
	}
}

func TestComposeRefuses(t *testing.T) {
	var calls []string
	v := &voter{calls: &calls}
	if _, err := profiler.Compose(); err == nil {
		t.Error("Compose() accepted no member")
	}
	if _, err := profiler.Compose(v, nil); err == nil {
		t.Error("Compose accepted a nil member")
	}
	var nilVoter *voter
	if _, err := profiler.Compose(v, nilVoter); err == nil {
		t.Error("Compose accepted a nil *voter")
	}
	inner, _ := profiler.Compose(v)
	if _, err := profiler.Compose(v, inner); err == nil || !strings.Contains(err.Error(), "Composite") {
		t.Errorf("Compose of a Composite: %v", err)
	}
	many := make([]profiler.Callback, 17)
	for i := range many {
		many[i] = v
	}
	if _, err := profiler.Compose(many...); err == nil {
		t.Error("Compose accepted 17 members")
	}
	c, _ := profiler.Compose(v, &voter{calls: &calls})
	if got := c.Members(); len(got) != 2 || got[0] != profiler.Callback(v) {
		t.Errorf("Members = %v", got)
	}
}
