package soak

import (
	"encoding/json"
	"os"
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
