// Package async reads what the async test app (async.cs beside it) and
// the tracers that trace it print, for the tests that run it built classic
// and runtime async (sample/autotrace, sample/gotrace). It is used only by
// tests.
package async

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// N is how many times one run of the app calls each of its async methods
// directly.
const N = 51

// Want is, per method of AsyncApp.Ops, how many calls a tracer must report
// for one run of the app and how many of them an exception ends.
// ThrowAfterAwait is called 2*N times (N directly, N under CatchAround),
// each ending with the exception it throws after its await: built runtime
// async, the body's; built classic, the exception its Task faults with (End
// runs at the task's completion).
func Want() map[string][2]int {
	exc := 2 * N
	return map[string][2]int{
		"DelayThenValue": {N, 0}, "ThrowAfterAwait": {2 * N, exc}, "CatchAround": {N, 0},
		"UsingAround": {N, 0}, "NoAwait": {N, 0}, "FinallyAround": {N, 0},
	}
}

// Figure reads KEY's value from the app's output line that starts with
// "LINE " ("DelayThenValue calls=51 sum=2550 mean_ms=20.512").
func Figure(stdout, line, key string) (float64, error) {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(line) + ` .*\b` + regexp.QuoteMeta(key) + `=([-0-9.]+)`).FindStringSubmatch(stdout)
	if m == nil {
		return 0, fmt.Errorf("the app printed no %s %s", line, key)
	}
	return strconv.ParseFloat(m[1], 64)
}

// DelayMean is the mean time the app measured around each of its awaits of
// DelayThenValue (which awaits Task.Delay(20)).
func DelayMean(stdout string) (time.Duration, error) {
	ms, err := Figure(stdout, "DelayThenValue", "mean_ms")
	if err != nil {
		return 0, err
	}
	return time.Duration(ms * float64(time.Millisecond)), nil
}

// Call is one line of a tracer's JSON-lines output (autotrace's and
// gotrace's share these fields).
type Call struct {
	Method    string  `json:"method"`
	Thread    uint64  `json:"thread"`
	Depth     int     `json:"depth"`
	DurNs     int64   `json:"dur_ns"`
	Exception *string `json:"exception"`
}

// Calls is what a trace holds of one method.
type Calls struct {
	Calls, Exceptions int
	Total, Min        time.Duration
	Threads           map[uint64]bool
}

// Mean is the calls' mean duration.
func (c *Calls) Mean() time.Duration { return c.Total / time.Duration(c.Calls) }

// ParseCalls reads a tracer's JSON-lines output: each call, and the calls
// summed per method.
func ParseCalls(data []byte) ([]Call, map[string]*Calls, error) {
	var calls []Call
	per := map[string]*Calls{}
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var c Call
		if err := json.Unmarshal(l, &c); err != nil {
			return nil, nil, fmt.Errorf("line %q: %v", l, err)
		}
		calls = append(calls, c)
		d := time.Duration(c.DurNs)
		a := per[c.Method]
		if a == nil {
			a = &Calls{Min: d, Threads: map[uint64]bool{}}
			per[c.Method] = a
		}
		a.Calls++
		a.Total += d
		a.Min = min(a.Min, d)
		a.Threads[c.Thread] = true
		if c.Exception != nil {
			a.Exceptions++
		}
	}
	return calls, per, nil
}

// FetchApp is the async-end app (fetch.cs beside this file): the issue's
// FetchAsync (await Task.Delay(100); call 3 of 5 throws after the await)
// and task-returning methods of every shape, each call measured by the app
// around its await ("CALL <method> <i> us=<n> <outcome>").

// AppCalls reads the fetch app's own measurements: per method, per call
// (in order), the time around the await.
func AppCalls(stdout string) map[string][]time.Duration {
	out := map[string][]time.Duration{}
	for _, m := range regexp.MustCompile(`(?m)^CALL (\S+) (\d+) us=(\d+) `).FindAllStringSubmatch(stdout, -1) {
		us, _ := strconv.ParseInt(m[3], 10, 64)
		out[m[1]] = append(out[m[1]], time.Duration(us)*time.Microsecond)
	}
	return out
}

// CheckFetch checks a tracer's calls of the fetch app's FetchAsync and
// Cancelled against the app's measurements: FetchAsync's 5 calls, only
// the third with an exception (InvalidOperationException), Cancelled's 3
// with cancelType; each call's duration inside the app's window around its
// await (End runs before the awaiting code resumes; 1 ms more for the two
// clocks' reads) and covering the await (at least half the window: the
// rest is the app's own code and the hooks, µs; but for a method's first
// call, whose window also holds JIT compilations before Begin). It
// returns what it saw.
func CheckFetch(stdout string, calls []Call, cancelType string) (string, error) {
	app := AppCalls(stdout)
	per := map[string][]Call{}
	for _, c := range calls {
		per[c.Method] = append(per[c.Method], c)
	}
	var seen bytes.Buffer
	for _, m := range []string{"FetchAsync", "Cancelled"} {
		cs, ws := per["FetchApp.Api::"+m], app[m]
		if len(cs) != len(ws) || len(cs) == 0 {
			return seen.String(), fmt.Errorf("%s: %d calls traced, the app made %d", m, len(cs), len(ws))
		}
		for i, c := range cs {
			d := time.Duration(c.DurNs)
			exc := "null"
			if c.Exception != nil {
				exc = *c.Exception
			}
			fmt.Fprintf(&seen, "%s %d: %v (app %v) exception %s\n", m, i+1, d, ws[i], exc)
			want := "null"
			if m == "FetchAsync" && i == 2 {
				want = "System.InvalidOperationException"
			} else if m == "Cancelled" {
				want = cancelType
			}
			if exc != want {
				return seen.String(), fmt.Errorf("%s call %d: exception %s, want %s", m, i+1, exc, want)
			}
			if d > ws[i]+time.Millisecond || (i > 0 && d < ws[i]/2) {
				return seen.String(), fmt.Errorf("%s call %d: traced %v, the app measured %v around the await", m, i+1, d, ws[i])
			}
		}
	}
	return seen.String(), nil
}
