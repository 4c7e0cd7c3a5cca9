package soak

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// readTraceSummary reads the summary file autotrace and gotrace write with
// *_SUMMARY=1 (a JSON line per method): the calls per method (its name
// normalized as ilcount's are), the number of lines, and all calls.
func readTraceSummary(t *testing.T, file string) (calls map[string]int64, methods int, total int64) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	calls = map[string]int64{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var s struct {
			Method string `json:"method"`
			Calls  int64  `json:"calls"`
		}
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatalf("summary line %q: %v", l, err)
		}
		methods++
		total += s.Calls
		calls[normalize(s.Method)] += s.Calls
	}
	return calls, methods, total
}

// readILCounts reads ilcount's output: the calls of every mcs method,
// normalized.
func readILCounts(t *testing.T, file string) map[string]int64 {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ilCalls := map[string]int64{}
	for _, m := range ilCountRe.FindAllStringSubmatch(string(data), -1) {
		if strings.HasSuffix(m[0], " errors") && strings.Contains(m[0], " methods rewritten, ") {
			continue
		}
		n, _ := strconv.ParseInt(m[1], 10, 64)
		if mcsType(m[2]) {
			ilCalls[normalize(m[2])] += n
		}
	}
	return ilCalls
}

// compareTraceCounts compares a tracer's calls per method with ilcount's:
// how many are equal, the methods within run-to-run variation (one call or
// 1%), and those that differ more or that only the tracer counted, each
// sorted and worded "name: tool N, ilcount M".
func compareTraceCounts(tool string, calls, ilCalls map[string]int64) (same int, varied, bad []string) {
	for n, i := range ilCalls {
		c := calls[n]
		switch {
		case c == i:
			same++
		case abs(c-i) <= max(1, i/100):
			varied = append(varied, fmt.Sprintf("%s: %s %d, ilcount %d", n, tool, c, i))
		default:
			bad = append(bad, fmt.Sprintf("%s: %s %d, ilcount %d", n, tool, c, i))
		}
	}
	for n, c := range calls {
		if _, ok := ilCalls[n]; !ok && c > 0 {
			bad = append(bad, fmt.Sprintf("%s: %s %d, ilcount none", n, tool, c))
		}
	}
	slices.Sort(bad)
	slices.Sort(varied)
	return same, varied, bad
}
