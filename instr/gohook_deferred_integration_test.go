//go:build cgo

package instr_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

var (
	goDeferredLine = regexp.MustCompile(`goprof: deferred delivered=(\d+) dropped=(\d+) flush=(\S+)`)
	goRecLine      = regexp.MustCompile(`goprof: rec enter=(\d+) exit=(\d+) bad=(\d+)`)
	goTimeLine     = regexp.MustCompile(`goprof: time timed=(\d+) bad=(\d+)`)
	goRecApp       = regexp.MustCompile(`rec: calls=(\d+) bad=(\d+)`)
)

// deferredCounts reads goprof's Shutdown lines of a deferred run.
func deferredCounts(t *testing.T, stderr string) (delivered, dropped int) {
	t.Helper()
	m := goDeferredLine.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no deferred line:\n%s", stderr)
	}
	if m[3] != "<nil>" {
		t.Errorf("FlushDeferred: %s", m[3])
	}
	delivered, _ = strconv.Atoi(m[1])
	dropped, _ = strconv.Atoi(m[2])
	return delivered, dropped
}

// TestGoHooksDeferred runs TestGoHooks's checks with deferred hooks
// (GoHooks.Deferred, with Timestamps) and rings large enough that nothing
// is dropped: every value kind, strings copied (a long one cut at 1024
// units and marked), exceptions and their types, states paired, panics
// counted, 8 threads; then it checks the counts (every call delivered,
// none dropped) and that every hook got a time, no exit earlier than its
// enter.
func TestGoHooksDeferred(t *testing.T) {
	lib := goprof(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := goHookApp(t, rt)
		base := harness.Run(t, rt, app, harness.RunOptions{})
		base.MustSucceed(t)
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
			Env: []string{"GOPROF_TARGETS=GoHookApp!Hooked.Kinds::*", "GOPROF_DEFERRED=1", "GOPROF_TIMESTAMPS=1",
				"CLRPROF_GOHOOK_RING=4194304"}})
		res.MustSucceed(t)
		if res.Stdout != base.Stdout {
			t.Errorf("app output changed by the hooks:\n--- without\n%s\n--- with\n%s", base.Stdout, res.Stdout)
		}
		lines := res.StderrLines()
		checkGoHooks(t, lines, true)
		printed := 0
		for _, l := range lines {
			if goEnterLine.MatchString(l) {
				printed++
			}
		}
		delivered, dropped := deferredCounts(t, res.Stderr)
		// Hot's 160,000 and Panicky's one (its Enter panics) print nothing.
		if want := printed + 160000 + 1; delivered != want || dropped != 0 {
			t.Errorf("delivered=%d dropped=%d, want %d and 0", delivered, dropped, want)
		}
		m := goTimeLine.FindStringSubmatch(res.Stderr)
		if m == nil || m[2] != "0" || m[1] == "0" {
			t.Errorf("timestamps: %v", m)
		}
		t.Logf("%s: %d calls delivered, 0 dropped, times: %s", rt.Name, delivered, m[0])
	})
}

// TestGoHooksDeferredOrder: 8 threads call a recursive method 4 deep, 5,000
// times each (160,000 hooked calls), with deferred hooks that check per
// thread that each Exit pairs with the last Enter not yet exited (its
// state, arguments and return value, times). With large rings every call
// is delivered; with 4 KiB rings many are dropped, and the counts must
// still add up exactly (delivered + dropped = the calls the app made, each
// delivered Exit with its Enter, everything left delivered by
// FlushDeferred at Shutdown).
func TestGoHooksDeferredOrder(t *testing.T) {
	lib := goprof(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := goHookApp(t, rt)
		// With arguments and clock, and without either (the C side's
		// entries for the common case, and the drain's path for leaf
		// calls: Rec(0, i), innermost, is one).
		for _, cf := range []struct{ ring, args string }{{"4194304", "1"}, {"4096", "1"}, {"4194304", "0"}, {"4096", "0"}} {
			ring := cf.ring
			env := []string{"GOPROF_TARGETS=GoHookApp!Hooked.Kinds::Rec", "GOPROF_DEFERRED=1", "CLRPROF_GOHOOK_RING=" + ring}
			if cf.args == "1" {
				env = append(env, "GOPROF_TIMESTAMPS=1")
			} else {
				env = append(env, "GOPROF_NOARGS=1")
			}
			res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
				Args: []string{"rec", "5000"}, Env: env})
			res.MustSucceed(t)
			a := goRecApp.FindStringSubmatch(res.Stdout)
			if a == nil || a[2] != "0" {
				t.Fatalf("app: %v\n%s", a, res.Describe())
			}
			calls, _ := strconv.Atoi(a[1])
			delivered, dropped := deferredCounts(t, res.Stderr)
			r := goRecLine.FindStringSubmatch(res.Stderr)
			if r == nil {
				t.Fatalf("no rec line:\n%s", res.Stderr)
			}
			enters, _ := strconv.Atoi(r[1])
			exits, _ := strconv.Atoi(r[2])
			t.Logf("%s ring=%s args=%s: %d calls, delivered=%d dropped=%d, enters=%d exits=%d bad=%s", rt.Name, ring, cf.args, calls, delivered, dropped, enters, exits, r[3])
			if calls != 160000 {
				t.Errorf("the app made %d calls, want 160000", calls)
			}
			if delivered+dropped != calls {
				t.Errorf("delivered %d + dropped %d != %d calls", delivered, dropped, calls)
			}
			if enters != delivered || exits != delivered || r[3] != "0" {
				t.Errorf("hooks: enters=%d exits=%d bad=%s, want %d, %d, 0", enters, exits, r[3], delivered, delivered)
			}
			if ring == "4194304" && dropped != 0 {
				t.Errorf("%d dropped with rings large enough for every call", dropped)
			}
			if ring == "4096" && dropped == 0 {
				t.Errorf("nothing dropped with 4 KiB rings: the test shows nothing about drops")
			}
			if m := goTimeLine.FindStringSubmatch(res.Stderr); m == nil || m[2] != "0" {
				t.Errorf("timestamps: %v", m)
			}
			if strings.Contains(res.Stderr, "malformed") {
				t.Errorf("bad records:\n%s", res.Stderr)
			}
		}
	})
}
