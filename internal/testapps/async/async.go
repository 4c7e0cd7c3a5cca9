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
// ThrowAfterAwait is called 2*N times (N directly, N under CatchAround).
// Built runtime async, its calls end with the exception it throws; built
// classic, the traced method is the state machine's stub, which returns
// the Task at the first await, so no exception leaves it.
func Want(runtimeAsync bool) map[string][2]int {
	exc := 0
	if runtimeAsync {
		exc = 2 * N
	}
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
