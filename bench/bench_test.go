package bench

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

func TestCorpusRoundTrip(t *testing.T) {
	c := &Corpus{
		Bodies:     [][]byte{{0x0A, 0x2A}, bytes.Repeat([]byte{0x00}, 300)},
		MethodSigs: [][]byte{{0x00, 0x00, 0x01}},
		LocalSigs:  [][]byte{{0x07, 0x01, 0x08}},
	}
	var buf bytes.Buffer
	n, err := c.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Errorf("WriteTo returned %d, wrote %d", n, buf.Len())
	}
	got, err := ReadCorpus(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Bodies) != 2 || !bytes.Equal(got.Bodies[1], c.Bodies[1]) || len(got.MethodSigs) != 1 || !bytes.Equal(got.LocalSigs[0], c.LocalSigs[0]) {
		t.Errorf("read back %+v", got)
	}
	if got.Bytes(KindBody) != 302 || got.Bytes(KindLocalSig) != 3 {
		t.Errorf("Bytes: %d %d", got.Bytes(KindBody), got.Bytes(KindLocalSig))
	}
}

func TestReadCorpusErrors(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"magic", "nope", "bad magic"},
		{"truncated length", corpusMagic + "\x01", "offset 17"},
		{"truncated data", corpusMagic + "\x01\x05ab", "truncated"},
		{"kind", corpusMagic + "\x09\x01a", "unknown corpus record kind 9"},
	} {
		_, err := ReadCorpus([]byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

func FuzzReadCorpus(f *testing.F) {
	var buf bytes.Buffer
	(&Corpus{Bodies: [][]byte{{0x0A, 0x2A}}, MethodSigs: [][]byte{{0, 0, 1}}}).WriteTo(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte(corpusMagic + "\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ReadCorpus(data)
		if err != nil {
			return
		}
		// What was read writes back to the same bytes.
		var out bytes.Buffer
		if _, err := c.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		again, err := ReadCorpus(out.Bytes())
		if err != nil {
			t.Fatalf("re-read: %v", err)
		}
		if len(again.Bodies) != len(c.Bodies) || len(again.MethodSigs) != len(c.MethodSigs) || len(again.LocalSigs) != len(c.LocalSigs) {
			t.Fatal("record counts changed")
		}
	})
}

func runs(ms ...int) []Run {
	var rs []Run
	for _, m := range ms {
		rs = append(rs, Run{Wall: time.Duration(m) * time.Millisecond, CPU: time.Duration(m/2) * time.Millisecond, MaxRSS: int64(m) << 20})
	}
	return rs
}

func TestMedianAndSpread(t *testing.T) {
	r := &Row{Runs: runs(100, 300, 110, 90, 105)}
	m := r.Median()
	if m.Wall != 105*time.Millisecond || m.CPU != 52*time.Millisecond || m.MaxRSS != 105<<20 {
		t.Errorf("median %+v", m)
	}
	// sorted 90 100 105 110 300: q1 100, q3 110 → (10/2)/105
	if s := r.Spread(); s < 0.047 || s > 0.048 {
		t.Errorf("spread %v", s)
	}
	even := &Row{Runs: runs(100, 200)}
	if even.Median().Wall != 150*time.Millisecond || even.Spread() != 0 {
		t.Errorf("even: %v %v", even.Median().Wall, even.Spread())
	}
	if (&Row{}).Median().Wall != 0 {
		t.Error("empty median")
	}
}

func TestMedianInterval(t *testing.T) {
	v := []float64{9, 1, 8, 2, 7, 3, 6, 4, 5}
	lo, hi := MedianInterval(v)
	if !(lo <= 5 && 5 <= hi) || lo < 2 || hi > 8 || hi-lo < 1 {
		t.Errorf("1..9: [%v, %v]", lo, hi)
	}
	if lo2, hi2 := MedianInterval(v); lo2 != lo || hi2 != hi {
		t.Errorf("not reproducible: [%v, %v] then [%v, %v]", lo, hi, lo2, hi2)
	}
	// Four times the rounds, the same spread: a narrower interval.
	var more []float64
	for range 4 {
		more = append(more, v...)
	}
	if lo4, hi4 := MedianInterval(more); !(lo4 <= 5 && 5 <= hi4) || hi4-lo4 >= hi-lo {
		t.Errorf("36 values: [%v, %v], 9 values: [%v, %v]", lo4, hi4, lo, hi)
	}
	if lo, hi := MedianInterval([]float64{1, 1, 1, 1, 1}); lo != 1 || hi != 1 {
		t.Errorf("constant: [%v, %v]", lo, hi)
	}
	if lo, hi := MedianInterval([]float64{3, 1, 2}); lo != 1 || hi != 3 {
		t.Errorf("three values: [%v, %v]", lo, hi)
	}
	if lo, hi := MedianInterval(nil); !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("empty: [%v, %v]", lo, hi)
	}
}

func report(goAlloc ...int) *Report {
	return &Report{
		Runtimes: []RuntimeInfo{{Name: "rt"}},
		Rows: []Row{
			{Runtime: "rt", Workload: "alloc", Config: "none", Runs: runs(100, 100, 100)},
			{Runtime: "rt", Workload: "alloc", Config: "c-alloc", Runs: runs(200, 200, 200)},
			{Runtime: "rt", Workload: "alloc", Config: "go-alloc-sync", Ref: "c-alloc", Runs: runs(goAlloc...)},
			{Runtime: "rt", Workload: "empty", Config: "none", Runs: runs(50, 50, 50)},
			{Runtime: "rt", Workload: "empty", Config: "go-idle", Ref: "c-idle", Runs: runs(58, 58, 58)},
			{Runtime: "rt", Workload: "calls", Config: "c-elt", Skipped: "hooks never fired"},
		},
	}
}

func TestRatioAndCheck(t *testing.T) {
	r := report(280, 280, 280)
	x, ok := Ratio(r.Row("rt", "alloc", "go-alloc-sync"), r.Row("rt", "alloc", "c-alloc"), false)
	if !ok || x != 1.4 {
		t.Errorf("ratio %v %v", x, ok)
	}
	if _, ok := Ratio(r.Row("rt", "calls", "c-elt"), r.Row("rt", "alloc", "none"), false); ok {
		t.Error("ratio of a row without runs")
	}
	got := map[string]Outcome{}
	for _, o := range Check(r) {
		got[o.Target.Name] = o
	}
	if o := got["allocations, synchronous Go handler (guarded) vs C"]; !o.OK || !o.Met || o.Measured != 1.4 {
		t.Errorf("sync alloc target: %+v", o)
	}
	if o := got["idle: start-up overhead (ms)"]; !o.OK || o.Met || o.Measured != 8 {
		t.Errorf("start-up target: %+v", o)
	}
	if o := got["ELT fast path vs C"]; o.OK || o.Note != "no such row in this run" {
		t.Errorf("ELT target: %+v", o)
	}
}

func TestCompare(t *testing.T) {
	prev := report(280, 280, 280)
	if regs := Compare(prev, report(290, 290, 290)); len(regs) != 0 {
		t.Errorf("a 3.6%% change was flagged: %v", regs)
	}
	regs := Compare(prev, report(350, 350, 350))
	if len(regs) != 4 { // wall and CPU, against none and against c-alloc
		t.Fatalf("regressions: %v", regs)
	}
	if g := regs[0]; g.Config != "go-alloc-sync" || g.Before != 2.8 || g.After != 3.5 || !strings.Contains(g.String(), "+25.0%") {
		t.Errorf("regression %+v %s", g, g)
	}
	// A noisy row needs a larger change.
	if regs := Compare(prev, report(200, 350, 500)); len(regs) != 0 {
		t.Errorf("noisy row flagged: %v", regs)
	}
}

func TestReportJSONAndMarkdown(t *testing.T) {
	r := report(280, 280, 280)
	r.Reps = 3
	r.Workloads = []Workload{{Name: "alloc", Args: "1 2", What: "storm"}, {Name: "empty"}, {Name: "calls"}}
	data, err := MarshalReport(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalReport(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Rows) != len(r.Rows) || back.Rows[2].Runs[0] != r.Rows[2].Runs[0] {
		t.Errorf("JSON round trip: %+v", back.Rows)
	}
	if _, err := UnmarshalReport([]byte("{")); err == nil {
		t.Error("bad JSON accepted")
	}
	md := Markdown(r, Check(r), Compare(r, report(400, 400, 400)), "the previous run", "## Notes\n\nhello\n")
	for _, want := range []string{
		"| alloc | go-alloc-sync | 280 ms | 140 ms | 280 MiB | 2.80× | 2.80× | 1.40× | 1.40× | ±0.0% |",
		"| allocations, synchronous Go handler (guarded) vs C | rt | 1.400× | 3.000× | met |",
		"**missed** by 3.0 ms",
		"skipped: hooks never fired",
		"Compared with the previous run, these ratios grew",
		"## Notes\n\nhello\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestAddUnknownKind(t *testing.T) {
	var c Corpus
	if err := c.Add(RecordKind(7), nil); err == nil || errors.Is(err, nil) {
		t.Errorf("Add(7) = %v", err)
	}
}

func countRuns(counts ...string) []Run {
	var rs []Run
	for _, c := range counts {
		rs = append(rs, Run{Wall: 100 * time.Millisecond, CPU: 50 * time.Millisecond, MaxRSS: 1 << 20, Counts: c})
	}
	return rs
}

func TestValidity(t *testing.T) {
	ref := &Row{Runs: countRuns("allocations=1000 lost=0", "allocations=1000 lost=0")}
	v := Validity{Zero: []string{"dropped", "unpaired"}, MatchRef: []string{"allocations"}}
	for _, tc := range []struct {
		name string
		runs []Run
		ref  *Row
		want string // "" valid, else a substring of the reason
	}{
		{"all good", countRuns("allocations=1000 dropped=0", "allocations=1000 dropped=0"), ref, ""},
		{"within tolerance", countRuns("allocations=1000 dropped=0"), &Row{Runs: countRuns("allocations=100000")}, "allocations=1000 in run 1, the C reference counted 100000"},
		{"tiny difference", countRuns("allocations=99999"), &Row{Runs: countRuns("allocations=100000")}, ""},
		{"dropped", countRuns("allocations=1000 dropped=0", "allocations=990 dropped=10"), ref, "1 of 2 runs did not do the whole work (dropped=10 in run 2)"},
		{"unpaired", countRuns("allocations=1000 unpaired=3"), ref, "unpaired=3 in run 1"},
		{"short", countRuns("allocations=900", "allocations=900"), ref, "2 of 2 runs did not do the whole work (allocations=900 in run 1, the C reference counted 1000)"},
		{"missing count", countRuns("dropped=0"), ref, "allocations=0 in run 1"},
		{"no reference", countRuns("allocations=1000"), nil, "no C reference run"},
		{"reference without the count", countRuns("allocations=1000"), &Row{Runs: countRuns("lost=0")}, "the C reference reported no allocations"},
	} {
		got := v.Check(&Row{Runs: tc.runs}, tc.ref)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: Check = %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := (Validity{}).Check(&Row{Runs: countRuns("dropped=5")}, nil); got != "" {
		t.Errorf("empty Validity: %q", got)
	}
}

func TestCheckInvalid(t *testing.T) {
	r := report(150, 150, 150)
	r.Rows[2].Invalid = "1 of 3 runs did not do the whole work (dropped=7 in run 2)"
	r.Rows = append(r.Rows,
		Row{Runtime: "rt", Workload: "calls", Config: "none", Runs: runs(10, 10, 10)},
		Row{Runtime: "rt", Workload: "calls", Config: "go-elt-fast", Ref: "c-elt2", Runs: runs(20, 20, 20)},
		Row{Runtime: "rt", Workload: "calls", Config: "c-elt2", Runs: runs(20, 20, 20), Invalid: "1 of 3 runs did not do the whole work (unpaired=9 in run 1)"},
		// An older report: no Invalid, but drops in the counts.
		Row{Runtime: "rt", Workload: "cpu", Config: "none", Runs: runs(10, 10, 10)},
		Row{Runtime: "rt", Workload: "cpu", Config: "go-sample", Runs: runs(10, 10, 10), Counts: "samples=5 dropped=2"},
	)
	got := map[string]Outcome{}
	for _, o := range Check(r) {
		got[o.Target.Name] = o
	}
	// Fast enough, but invalid: never met.
	if o := got["allocations, synchronous Go handler (guarded) vs C"]; !o.OK || o.Met || !strings.Contains(o.Invalid, "dropped=7") {
		t.Errorf("invalid row: %+v", o)
	}
	if o := got["ELT fast path vs C"]; !o.OK || o.Met || !strings.Contains(o.Invalid, "its baseline c-elt2: ") {
		t.Errorf("invalid baseline: %+v", o)
	}
	if o := got["CPU sampling ~100 Hz vs no profiler"]; o.Met || !strings.Contains(o.Invalid, "dropped 2 events") {
		t.Errorf("drops in an older report: %+v", o)
	}
	r.Workloads = []Workload{{Name: "alloc"}, {Name: "calls"}, {Name: "cpu"}}
	md := Markdown(r, Check(r), nil, "", "")
	for _, want := range []string{
		"| cpu | go-sample (**invalid**) | 10 ms | 5 ms | 10 MiB | 1.00× | 1.00× | – | – | ±0.0% | invalid: the recorder dropped 2 events in the last run; last run: samples=5 dropped=2 |",
		"| 0.750× | 3.000× | **invalid**: 1 of 3 runs did not do the whole work (dropped=7 in run 2) |",
		"| alloc | go-alloc-sync (**invalid**) |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	// Invalid rows are not compared for regressions.
	if regs := Compare(report(100, 100, 100), r); len(regs) != 0 {
		t.Errorf("an invalid row was compared: %v", regs)
	}
}

// The steady-state metrics take each configuration's empty-workload median
// out: (1058-58)/(1050-50) = 1.0 although the plain ratio is 1058/1050.
func TestSteadyStateMetric(t *testing.T) {
	r := report(280, 280, 280)
	r.Rows = append(r.Rows,
		Row{Runtime: "rt", Workload: "cpu", Config: "none", Runs: runs(1050, 1050, 1050)},
		Row{Runtime: "rt", Workload: "cpu", Config: "go-idle", Runs: runs(1058, 1058, 1058)})
	got := map[string]Outcome{}
	for _, o := range Check(r) {
		got[o.Target.Name] = o
	}
	if o := got["idle: CPU-bound steady state, start-up taken out (wall ratio)"]; !o.OK || !o.Met || o.Measured != 1.0 {
		t.Errorf("steady wall: %+v", o)
	}
	if o := got["idle: CPU-bound steady state (wall ratio)"]; !o.OK || o.Measured <= 1.0 {
		t.Errorf("plain wall: %+v", o)
	}
}

func TestOutputMetric(t *testing.T) {
	r := report(280, 280, 280)
	with := func(rs []Run, wallUS, cpuUS []int) []Run {
		for i := range rs {
			rs[i].Counts = fmt.Sprintf("periods=1 output_wall_us=%d output_cpu_us=%d", wallUS[i], cpuUS[i])
		}
		return rs
	}
	r.Rows = append(r.Rows,
		// The whole runs differ by 10% (noise); the output at exit by
		// 20 ms of wall time and 10 ms of CPU time (medians).
		Row{Runtime: "rt", Workload: "cpu", Config: "go-contprof", Runs: with(runs(2000, 2000, 2000), []int{5000, 6000, 90000}, []int{4000, 4000, 4000})},
		Row{Runtime: "rt", Workload: "cpu", Config: "go-contprof-export", Ref: "go-contprof", Runs: with(runs(2200, 2200, 2200), []int{25000, 26000, 27000}, []int{14000, 14000, 15000})})
	got := map[string]Outcome{}
	for _, o := range Check(r) {
		if o.Target.Workload == "cpu" && o.Target.Config == "go-contprof-export" {
			got[o.Target.Metric] = o
		}
	}
	if o := got["wall"]; !o.OK || o.Measured != 1.1 || o.Met {
		t.Errorf("whole-run wall: %+v", o)
	}
	if o := got["wall-output"]; !o.OK || o.Measured != 1.01 || !o.Met || !strings.Contains(o.Note, "output 26ms against 6ms") {
		t.Errorf("wall-output: %+v", o)
	}
	if o := got["cpu-output"]; !o.OK || o.Measured != 1.01 || !o.Met {
		t.Errorf("cpu-output: %+v", o)
	}
	r.Rows[len(r.Rows)-2].Runs[1].Counts = "periods=1"
	for _, o := range Check(r) {
		if o.Target.Workload == "cpu" && o.Target.Metric == "wall-output" && (o.OK || !strings.Contains(o.Note, "no output_wall_us counts")) {
			t.Errorf("a run without the count: %+v", o)
		}
	}
}

// The accounted metrics add the profiler's start-up (its empty-workload
// median minus none's, less what it accounted for there) and the median
// of the cost it accounted for on the workload to the baseline's median,
// whatever the whole runs' noise: here the whole-run ratio is 1.1 and the
// accounted one (2000 + (70-50-4) + 24) / 2000 = 1.02 in wall time,
// (1000 + (35-25-2) + 12) / 1000 = 1.02 in CPU time (runs gives CPU as
// half the wall).
func TestAccountedMetric(t *testing.T) {
	with := func(rs []Run, wallUS, cpuUS []int) []Run {
		for i := range rs {
			rs[i].Counts = fmt.Sprintf("samples=9 cost_wall_us=%d cost_cpu_us=%d held_us=1", wallUS[i], cpuUS[i])
		}
		return rs
	}
	rt := "net8.0.4"
	r := &Report{Runtimes: []RuntimeInfo{{Name: rt}}, Rows: []Row{
		{Runtime: rt, Workload: "empty", Config: "none", Runs: runs(50, 50, 50)},
		{Runtime: rt, Workload: "empty", Config: "cpuprof-99-start", Runs: with(runs(70, 70, 70), []int{4000, 4000, 4000}, []int{2000, 2000, 2000})},
		{Runtime: rt, Workload: "mcs", Config: "none", Runs: runs(2000, 2000, 2000)},
		{Runtime: rt, Workload: "mcs", Config: "cpuprof-99", Runs: with(runs(2200, 2200, 2200), []int{20000, 24000, 90000}, []int{12000, 12000, 12000})},
	}}
	got := map[string]Outcome{}
	for _, o := range Check(r) {
		if o.Target.Workload == "mcs" && o.Target.Config == "cpuprof-99" {
			got[o.Target.Metric] = o
		}
	}
	if o := got["wall"]; !o.OK || o.Measured != 1.1 || o.Met {
		t.Errorf("whole-run wall: %+v", o)
	}
	if o := got["wall-accounted"]; !o.OK || o.Measured != 1.02 || !o.Met || !strings.Contains(o.Note, "start-up 16.0 ms + 24.0 ms accounted") {
		t.Errorf("wall-accounted: %+v", o)
	}
	if o := got["cpu-accounted"]; !o.OK || o.Measured != 1.02 || !o.Met {
		t.Errorf("cpu-accounted: %+v", o)
	}
	r.Rows[1].Runs = nil
	for _, o := range Check(r) {
		if o.Target.Workload == "mcs" && o.Target.Metric == "wall-accounted" && o.Target.Config == "cpuprof-99" && (o.OK || !strings.Contains(o.Note, "no empty-workload rows")) {
			t.Errorf("without the start-up row: %+v", o)
		}
	}
}

// The slope metrics compare what each configuration takes beyond its twin
// doing less of the same work: with go-gohook-deferred at 400 ms and
// c-gohook at 200, and their -x3 twins at 700 and 400, the calls between
// cost 300 against 200 ms: 1.5, where the -x3 rows' plain ratio is 1.75
// and the others' 2.0. An invalid twin makes the outcome invalid.
func TestSlopeMetric(t *testing.T) {
	mk := func(shortInvalid string) []Outcome {
		r := report(280, 280, 280)
		r.Rows = append(r.Rows,
			Row{Runtime: "rt", Workload: "gohook-calls", Config: "c-gohook", Runs: runs(200, 200, 200)},
			Row{Runtime: "rt", Workload: "gohook-calls", Config: "go-gohook-deferred", Ref: "c-gohook", Runs: runs(400, 400, 400), Invalid: shortInvalid},
			Row{Runtime: "rt", Workload: "gohook-calls", Config: "c-gohook-x3", Runs: runs(400, 400, 400)},
			Row{Runtime: "rt", Workload: "gohook-calls", Config: "go-gohook-deferred-x3", Ref: "c-gohook-x3", Runs: runs(700, 700, 700)})
		return Check(r)
	}
	find := func(out []Outcome, metric string) Outcome {
		for _, o := range out {
			if o.Target.Config == "go-gohook-deferred-x3" && o.Target.Metric == metric {
				return o
			}
		}
		t.Fatalf("no %s outcome", metric)
		return Outcome{}
	}
	out := mk("")
	if o := find(out, "wall-slope"); !o.OK || o.Measured != 1.5 || !o.Met || o.Invalid != "" {
		t.Errorf("wall slope: %+v", o)
	}
	if o := find(out, "cpu-slope"); !o.OK || o.Measured != 1.5 {
		t.Errorf("cpu slope: %+v", o)
	}
	if o := find(mk("1 of 3 runs did not do the whole work (dropped=5 in run 1)"), "wall-slope"); o.Met || !strings.Contains(o.Invalid, "go-gohook-deferred: ") {
		t.Errorf("an invalid twin went unnoticed: %+v", o)
	}
}

// The async per-call table: (median − none's median) / calls, a Go
// configuration's start-up (empty: go-wrap-start − none) taken out.
func TestAsyncCosts(t *testing.T) {
	r := &Report{
		Runtimes:  []RuntimeInfo{{Name: "rt"}},
		Workloads: []Workload{{Name: "empty"}, {Name: "async-sync", Args: "1000000 sync"}, {Name: "wrap", Args: "5"}},
		Rows: []Row{
			{Runtime: "rt", Workload: "empty", Config: "none", Runs: runs(20, 20, 20)},
			{Runtime: "rt", Workload: "empty", Config: "go-wrap-start", Runs: runs(30, 30, 30)},
			{Runtime: "rt", Workload: "async-sync", Config: "none", Runs: runs(100, 100, 100)},
			{Runtime: "rt", Workload: "async-sync", Config: "async-hand-await", Runs: runs(150, 150, 150)},
			{Runtime: "rt", Workload: "async-sync", Config: "go-wrap-async", Runs: runs(140, 140, 140), Invalid: "x"},
			{Runtime: "rt", Workload: "wrap", Config: "none", Runs: runs(1, 1, 1)},
			{Runtime: "rt", Workload: "wrap", Config: "hand", Runs: runs(2, 2, 2)},
		},
	}
	cs := AsyncCosts(r)
	if len(cs) != 2 {
		t.Fatalf("%d rows: %+v", len(cs), cs)
	}
	// runs gives CPU as half the wall.
	if c := cs[0]; c.Config != "async-hand-await" || c.Calls != 1000000 || c.Wall != 50 || c.CPU != 25 || c.StartupOut || c.NoneWall != 100 {
		t.Errorf("hand: %+v", c)
	}
	if c := cs[1]; c.Config != "go-wrap-async" || c.Wall != 30 || c.CPU != 15 || !c.StartupOut || c.Invalid != "x" {
		t.Errorf("wrap: %+v", c)
	}
	md := Markdown(r, nil, nil, "", "")
	for _, want := range []string{
		"## Async wrap per call",
		"| rt | async-sync | 1000000 | 100 / 50 ns | async-hand-await | +50 | +25 | ±0.0% / ±0.0% (±0.0% / ±0.0%) |",
		"| go-wrap-async (start-up out) (**invalid**) | +30 | +15 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	// The CPU times' own noise: sorted 40 50 60, q1 45, q3 55 → 5/50.
	r.Rows[3].Runs[0].CPU, r.Rows[3].Runs[1].CPU, r.Rows[3].Runs[2].CPU = 40*time.Millisecond, 50*time.Millisecond, 60*time.Millisecond
	if c := AsyncCosts(r)[0]; c.CPUSpread != 0.1 || c.Spread != 0 {
		t.Errorf("CPU spread %v, wall %v", c.CPUSpread, c.Spread)
	}
	r.Workloads = r.Workloads[:1]
	if strings.Contains(Markdown(r, nil, nil, "", ""), "Async wrap") {
		t.Error("a table without async workloads")
	}
}
