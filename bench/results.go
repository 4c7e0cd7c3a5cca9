package bench

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Run is one process: its wall time, CPU time (user + system, from the
// child's rusage) and peak resident set size (ru_maxrss).
type Run struct {
	Wall   time.Duration `json:"wall"`
	CPU    time.Duration `json:"cpu"`
	MaxRSS int64         `json:"maxrss"` // bytes
	// Counts is what the profiler reported at Shutdown ("k=v k=v").
	Counts string `json:"counts,omitempty"`
}

// Row is one (runtime, workload, configuration) cell of a benchmark run.
type Row struct {
	Runtime  string `json:"runtime"`
	Workload string `json:"workload"`
	Config   string `json:"config"`
	// Ref is the configuration of the C reference this row is compared
	// with ("" for none and for the C rows themselves).
	Ref string `json:"ref,omitempty"`
	// Informational rows are reported but never checked against targets
	// or flagged as regressions.
	Informational bool `json:"informational,omitempty"`
	// Runs are the measured processes, in the order they ran.
	Runs []Run `json:"runs,omitempty"`
	// Counts is what the profiler reported at Shutdown in the last run.
	Counts string `json:"counts,omitempty"`
	// Skipped says why the row has no runs on this runtime.
	Skipped string `json:"skipped,omitempty"`
	// Invalid says why the row's runs do not measure the work they were
	// meant to (events dropped, counts that disagree with the C
	// reference; see Validity): it is reported, but never met a target.
	Invalid string `json:"invalid,omitempty"`
}

// Validity says what a configuration's Shutdown counts must show for its
// runs to measure the whole work.
type Validity struct {
	// Zero are counts that must be 0 in every run: events dropped or lost,
	// leaves that pair with no enter.
	Zero []string
	// MatchRef are counts that must equal, within MatchTolerance, the same
	// count of the row's C reference (its last run): allocations recorded,
	// functions entered.
	MatchRef []string
}

// MatchTolerance is the relative difference allowed between a count and
// the C reference's (Validity.MatchRef): the workloads are deterministic,
// but a runtime's own background work can add a few events.
const MatchTolerance = 1e-4

// Check returns why row's runs are invalid, or "" if they are not. ref is
// the row's C reference (for MatchRef).
func (v Validity) Check(row, ref *Row) string {
	bad, first := 0, ""
	for i, r := range row.Runs {
		why := ""
		for _, k := range v.Zero {
			if n, _ := countOf(r.Counts, k); n != 0 {
				why = fmt.Sprintf("%s=%d in run %d", k, n, i+1)
				break
			}
		}
		for _, k := range v.MatchRef {
			if why != "" {
				break
			}
			if ref == nil || len(ref.Runs) == 0 {
				return fmt.Sprintf("no C reference run to check %s against", k)
			}
			want, ok := countOf(ref.Runs[len(ref.Runs)-1].Counts, k)
			if !ok {
				return fmt.Sprintf("the C reference reported no %s", k)
			}
			got, ok := countOf(r.Counts, k)
			if !ok || math.Abs(float64(got-want)) > MatchTolerance*math.Abs(float64(want)) {
				why = fmt.Sprintf("%s=%d in run %d, the C reference counted %d", k, got, i+1, want)
			}
		}
		if why != "" {
			bad++
			if first == "" {
				first = why
			}
		}
	}
	if bad == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d runs did not do the whole work (%s)", bad, len(row.Runs), first)
}

// invalid is why row does not count: its Invalid, or, in reports made
// before rows were validated, the drops its last run reported.
func invalid(row *Row) string {
	if row.Invalid != "" {
		return row.Invalid
	}
	if d, _ := countOf(row.Counts, "dropped"); d > 0 {
		return fmt.Sprintf("the recorder dropped %d events in the last run", d)
	}
	return ""
}

// Median returns the row's median wall time, CPU time and peak RSS (each
// taken separately).
func (r *Row) Median() Run {
	var w, c []time.Duration
	var m []int64
	for _, x := range r.Runs {
		w = append(w, x.Wall)
		c = append(c, x.CPU)
		m = append(m, x.MaxRSS)
	}
	return Run{Wall: median(w), CPU: median(c), MaxRSS: median(m)}
}

// Spread is the relative half-range of the middle runs' wall times: half of
// (third quartile - first quartile) over the median, a robust measure of the
// row's noise (0 with fewer than 3 runs).
func (r *Row) Spread() float64 {
	if len(r.Runs) < 3 {
		return 0
	}
	var w []float64
	for _, x := range r.Runs {
		w = append(w, float64(x.Wall))
	}
	sort.Float64s(w)
	q1, q3 := quantile(w, 0.25), quantile(w, 0.75)
	med := quantile(w, 0.5)
	if med == 0 {
		return 0
	}
	return (q3 - q1) / 2 / med
}

func median[T int64 | time.Duration](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// quantile interpolates linearly in sorted xs.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	pos := q * float64(len(xs)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	return xs[lo] + (xs[hi]-xs[lo])*(pos-float64(lo))
}

// MedianInterval is a 95% interval of the median of v by the percentile
// bootstrap: the median of 4000 resamples of v (with replacement, from a
// fixed seed, so a report is reproducible), their 2.5th and 97.5th
// percentiles. It is what a benchmark's per-round ratios can say of the
// median: a target inside the interval is neither met nor missed. With
// fewer than 4 values it returns v's minimum and maximum.
func MedianInterval(v []float64) (lo, hi float64) {
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) < 4 {
		return s[0], s[len(s)-1]
	}
	const resamples = 4000
	rng := rand.New(rand.NewPCG(1, 2))
	meds := make([]float64, resamples)
	r := make([]float64, len(s))
	for i := range meds {
		for j := range r {
			r[j] = s[rng.IntN(len(s))]
		}
		slices.Sort(r)
		meds[i] = quantile(r, 0.5)
	}
	slices.Sort(meds)
	return quantile(meds, 0.025), quantile(meds, 0.975)
}

// Throughput is one Go benchmark of the decoders.
type Throughput struct {
	Name        string  `json:"name"`
	Items       int     `json:"items"` // bodies or signatures per op
	Bytes       int64   `json:"bytes"` // bytes per op
	MBPerSec    float64 `json:"mbPerSec"`
	ItemsPerSec float64 `json:"itemsPerSec"`
	AllocsPer   float64 `json:"allocsPerItem"`
	BytesPer    float64 `json:"bytesPerItem"` // heap bytes allocated per item
	Mismatches  int     `json:"mismatches"`
	Source      string  `json:"source"` // where the corpus came from
}

// Machine describes where a report was measured.
type Machine struct {
	CPU       string `json:"cpu"`
	Cores     int    `json:"cores"`
	Kernel    string `json:"kernel"`
	MemTotal  string `json:"memTotal"`
	LoadStart string `json:"loadStart"` // /proc/loadavg when the run started
	LoadEnd   string `json:"loadEnd"`
	Go        string `json:"go"`
	GCC       string `json:"gcc"`
	MCS       string `json:"mcs"`
}

// RuntimeInfo names one runtime a report covers.
type RuntimeInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Source  string `json:"source"`
}

// Report is a whole benchmark run.
type Report struct {
	Date       string        `json:"date"` // UTC, RFC 3339
	Commit     string        `json:"commit"`
	Quick      bool          `json:"quick"`
	Reps       int           `json:"reps"`
	Duration   time.Duration `json:"duration"`
	Machine    Machine       `json:"machine"`
	Runtimes   []RuntimeInfo `json:"runtimes"`
	Workloads  []Workload    `json:"workloads"`
	Configs    []ConfigInfo  `json:"configs"`
	Rows       []Row         `json:"rows"`
	Throughput []Throughput  `json:"throughput"`
}

// Workload describes one C# workload as it was run.
type Workload struct {
	Name string `json:"name"`
	Args string `json:"args"`
	What string `json:"what"`
}

// ConfigInfo describes one profiler configuration.
type ConfigInfo struct {
	Name string `json:"name"`
	What string `json:"what"`
}

// Row returns the row of (runtime, workload, config), or nil.
func (r *Report) Row(runtime, workload, config string) *Row {
	for i := range r.Rows {
		x := &r.Rows[i]
		if x.Runtime == runtime && x.Workload == workload && x.Config == config {
			return x
		}
	}
	return nil
}

// Ratio is a row's median over another row's median (wall or CPU time);
// ok is false when either row has no runs.
func Ratio(a, b *Row, cpu bool) (float64, bool) {
	if a == nil || b == nil || len(a.Runs) == 0 || len(b.Runs) == 0 {
		return 0, false
	}
	ma, mb := a.Median(), b.Median()
	x, y := ma.Wall, mb.Wall
	if cpu {
		x, y = ma.CPU, mb.CPU
	}
	if y <= 0 {
		return 0, false
	}
	return float64(x) / float64(y), true
}

// MarshalReport encodes r as indented JSON.
func MarshalReport(r *Report) ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// UnmarshalReport decodes what MarshalReport wrote.
func UnmarshalReport(data []byte) (*Report, error) {
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("bench: results: %w", err)
	}
	return &r, nil
}

// Regression is a row whose ratio got worse than in the previous report.
type Regression struct {
	Runtime, Workload, Config string
	Against                   string // "none" or the C reference
	Metric                    string // "wall" or "cpu"
	Before, After             float64
}

func (g Regression) String() string {
	return fmt.Sprintf("%s %s %s: %s ratio vs %s %.3f → %.3f (%+.1f%%)", g.Runtime, g.Workload, g.Config,
		g.Metric, g.Against, g.Before, g.After, 100*(g.After/g.Before-1))
}

// RegressionTolerance is how much worse (relative) a ratio may get before it
// is flagged, at least; a row's own noise (Spread of it and of the row it
// is compared with, doubled) raises it.
const RegressionTolerance = 0.10

// Compare flags the rows of cur whose ratio against no profiler or against
// their C reference (wall and CPU time) grew by more than the tolerance
// since prev. Ratios, not absolute times, are compared, so a busier or
// quieter machine matters less; informational rows are skipped.
func Compare(prev, cur *Report) []Regression {
	var out []Regression
	for i := range cur.Rows {
		row := &cur.Rows[i]
		if row.Config == "none" || row.Informational || len(row.Runs) == 0 || invalid(row) != "" {
			continue
		}
		old := prev.Row(row.Runtime, row.Workload, row.Config)
		if old == nil || len(old.Runs) == 0 || invalid(old) != "" {
			continue
		}
		against := []string{"none"}
		if row.Ref != "" {
			against = append(against, row.Ref)
		}
		for _, a := range against {
			base, oldBase := cur.Row(row.Runtime, row.Workload, a), prev.Row(row.Runtime, row.Workload, a)
			if base == nil || oldBase == nil || invalid(base) != "" || invalid(oldBase) != "" {
				continue
			}
			tol := max(RegressionTolerance, 2*(row.Spread()+base.Spread()))
			for _, cpu := range []bool{false, true} {
				after, ok1 := Ratio(row, base, cpu)
				before, ok2 := Ratio(old, oldBase, cpu)
				if !ok1 || !ok2 || before <= 0 {
					continue
				}
				if after > before*(1+tol) {
					m := "wall"
					if cpu {
						m = "cpu"
					}
					out = append(out, Regression{row.Runtime, row.Workload, row.Config, a, m, before, after})
				}
			}
		}
	}
	return out
}

// Target is one goal of the benchmark issue, checked per runtime.
type Target struct {
	// Name says what is promised.
	Name     string
	Workload string
	Config   string
	// Against is "none" or "ref" (the row's C reference).
	Against string
	// Metric is "wall" or "cpu" (ratio), "wall-steady" or "cpu-steady"
	// (ratio after subtracting each configuration's median on the empty
	// workload, or its StartupOf twin's: start-up and shutdown taken out),
	// "wall-slope" or "cpu-slope" (ratio of the differences between each
	// configuration's median and its twin's doing less of the same work,
	// slopeOf: the cost of the calls the longer runs make beyond the
	// shorter, with everything paid once a run taken out), "wall-delta" or
	// "cpu-delta" (milliseconds over), "rss-delta" (MiB over), or
	// "wall-output" or "cpu-output": the ratio of the baseline's median
	// plus the difference between the two configurations' own timing of
	// their output (the medians of their output_wall_us or output_cpu_us
	// counts: contprof's exporters' set-up and its last period written
	// and shipped at exit) to the baseline's median. For configurations
	// that differ only in what they do with their output (contprof
	// shipping it or not), this measures that difference directly, where
	// the whole runs' ratio is within their noise. "wall-accounted" or
	// "cpu-accounted": the ratio of the baseline's median plus what the
	// profiler cost, measured as it ran and in the same run: its start-up
	// (its median on the empty workload, StartupOf, minus the baseline's
	// there, less the cost it accounted for on the empty workload) and the
	// cost it accounted for on this workload (the median of its
	// cost_wall_us or cost_cpu_us count, package pprofbuild/overhead), to the
	// baseline's median: the profiler's cost where whole runs are too noisy
	// to show a few percent.
	Metric string
	Limit  float64
}

// Targets are the goals of the benchmark issue. Rows that do not exist in
// a report (a fast path not built yet, a runtime without the API) are
// reported as not measured.
var Targets = []Target{
	{"idle: start-up overhead (ms)", "empty", "go-idle", "none", "wall-delta", 5},
	{"idle: start-up overhead, CPU time (ms)", "empty", "go-idle", "none", "cpu-delta", 5},
	{"idle: start-up overhead, JIT-heavy (ms)", "startup", "go-idle", "none", "wall-delta", 5},
	{"idle: start-up overhead, JIT-heavy, CPU time (ms)", "startup", "go-idle", "none", "cpu-delta", 5},
	{"idle: CPU-bound steady state (wall ratio)", "cpu", "go-idle", "none", "wall", 1.01},
	{"idle: CPU-bound steady state (CPU ratio)", "cpu", "go-idle", "none", "cpu", 1.01},
	{"idle: CPU-bound steady state, start-up taken out (wall ratio)", "cpu", "go-idle", "none", "wall-steady", 1.01},
	{"idle: CPU-bound steady state, start-up taken out (CPU ratio)", "cpu", "go-idle", "none", "cpu-steady", 1.01},
	{"idle: peak RSS (MiB over)", "cpu", "go-idle", "none", "rss-delta", 15},
	{"unimplemented callbacks: allocation storm vs C", "alloc", "go-unimpl", "ref", "wall", 1.03},
	{"unimplemented callbacks: exceptions vs C", "exceptions", "go-unimpl", "ref", "wall", 1.03},
	{"unimplemented callbacks: JIT-heavy start-up vs C", "startup", "go-unimpl", "ref", "wall", 1.03},
	{"allocations, C fast path vs C", "alloc", "go-alloc-fast", "ref", "wall", 1.10},
	{"allocations, C fast path vs C, CPU time", "alloc", "go-alloc-fast", "ref", "cpu", 1.10},
	{"allocations, C fast path vs C, start-up taken out", "alloc", "go-alloc-fast", "ref", "wall-steady", 1.10},
	{"allocations, C fast path vs C, start-up taken out, CPU time", "alloc", "go-alloc-fast", "ref", "cpu-steady", 1.10},
	{"allocations, synchronous Go handler (guarded) vs C", "alloc", "go-alloc-sync", "ref", "wall", 3},
	{"ELT fast path vs C", "calls", "go-elt-fast", "ref", "wall", 1.25},
	{"ELT fast path vs C, CPU time", "calls", "go-elt-fast", "ref", "cpu", 1.25},
	{"ELT fast path: peak RSS over C (MiB)", "calls", "go-elt-fast", "ref", "rss-delta", 64},
	{"ELT call counting in C vs C", "calls", "go-elt-count", "ref", "wall", 1.25},
	{"ELT call counting in C vs C, CPU time", "calls", "go-elt-count", "ref", "cpu", 1.25},
	{"CPU sampling ~100 Hz vs no profiler", "cpu", "go-sample", "none", "wall", 1.03},
	{"continuous profiler (sample/contprof) at its defaults: CPU-bound vs no profiler", "cpu", "go-contprof", "none", "wall", 1.05},
	{"continuous profiler (sample/contprof) at its defaults: CPU-bound vs no profiler, start-up taken out", "cpu", "go-contprof", "none", "wall-steady", 1.05},
	{"continuous profiler (sample/contprof) at its defaults: allocation storm vs no profiler", "alloc", "go-contprof", "none", "wall", 1.05},
	{"continuous profiler (sample/contprof) at its defaults: allocation storm vs no profiler, start-up taken out", "alloc", "go-contprof", "none", "wall-steady", 1.05},
	{"continuous profiler (sample/contprof) at its defaults: allocation storm vs no profiler, start-up taken out, CPU time", "alloc", "go-contprof", "none", "cpu-steady", 1.05},
	{"continuous profiler (sample/contprof) at its defaults: long allocation storm vs no profiler", "alloc-long", "go-contprof", "none", "wall", 1.05},
	{"continuous profiler (sample/contprof) at its defaults: long allocation storm vs no profiler, CPU time", "alloc-long", "go-contprof", "none", "cpu", 1.05},
	{"continuous profiler (sample/contprof) at its defaults: long allocation storm vs no profiler, start-up taken out", "alloc-long", "go-contprof", "none", "wall-steady", 1.05},
	{"continuous profiler (sample/contprof) at its defaults: long allocation storm vs no profiler, start-up taken out, CPU time", "alloc-long", "go-contprof", "none", "cpu-steady", 1.05},
	{"continuous profiler (sample/contprof), live heap on everywhere (CONTPROF_HEAP=1): long allocation storm vs no profiler, start-up taken out", "alloc-long", "go-contprof-heap", "none", "wall-steady", 1.05},
	{"continuous profiler (sample/contprof), live heap off (CONTPROF_HEAP=0): long allocation storm vs no profiler, start-up taken out", "alloc-long", "go-contprof-noheap", "none", "wall-steady", 1.05},
	{"instr: a hot small method wrapped with an empty integration vs the same wrap written by hand in C#", "wrap", "go-wrap", "ref", "wall", 1.10},
	{"instr: a hot small method wrapped with an empty integration vs the same wrap written by hand in C#, start-up taken out (per call)", "wrap", "go-wrap", "ref", "wall-steady", 1.10},
	{"instr: a hot small method wrapped with an empty integration vs the same wrap written by hand in C#, start-up taken out (per call), CPU time", "wrap", "go-wrap", "ref", "cpu-steady", 1.10},
	{"instr Go hooks: an empty Go hook vs an empty C hook bound the same way (P/Invoke from the wrap), start-up taken out (per call)", "gohook", "go-gohook", "ref", "wall-steady", 1.5},
	{"instr deferred Go hooks: an empty deferred Go hook vs an empty C hook bound the same way, start-up taken out (per call)", "gohook", "go-gohook-deferred", "ref", "wall-steady", 1.5},
	{"instr deferred Go hooks: an empty deferred Go hook vs an empty C hook bound the same way, start-up taken out (per call), CPU time (the drain goroutine's included)", "gohook", "go-gohook-deferred", "ref", "cpu-steady", 1.5},
	{"instr deferred Go hooks: an empty deferred Go hook vs an empty C hook bound the same way, per call (the 10,000,000 calls the -x3 configurations make beyond the others, interleaved: costs paid once a run cancel)", "gohook-calls", "go-gohook-deferred-x3", "ref", "wall-slope", 1.5},
	{"instr deferred Go hooks: an empty deferred Go hook vs an empty C hook bound the same way, per call (-x3 minus the others), CPU time (the drain goroutine's included)", "gohook-calls", "go-gohook-deferred-x3", "ref", "cpu-slope", 1.5},
	{"a chained native profiler (the C reference behind the idle Go profiler, CLRPROF_CHAIN_PATH): unimplemented callbacks vs the same C profiler alone", "alloc", "c-unimpl-chained", "ref", "wall", 1.05},
	{"a chained native profiler: unimplemented callbacks vs the same C profiler alone, start-up taken out (the Go runtime's own start-up is go-idle's)", "alloc", "c-unimpl-chained", "ref", "wall-steady", 1.05},
	{"a chained native profiler: ObjectAllocated on every allocation vs the same C profiler alone", "alloc", "c-alloc-chained", "ref", "wall", 1.05},
	{"a chained native profiler: ObjectAllocated on every allocation vs the same C profiler alone, start-up taken out", "alloc", "c-alloc-chained", "ref", "wall-steady", 1.05},
	{"a chained native profiler: ObjectAllocated on every allocation vs the same C profiler alone, start-up taken out, CPU time", "alloc", "c-alloc-chained", "ref", "cpu-steady", 1.05},
	{"a chained native profiler: unimplemented callbacks vs the same C profiler alone, long allocation storm (20 M ObjectAllocated)", "alloc-long", "c-unimpl-chained", "ref", "wall", 1.05},
	{"a chained native profiler: unimplemented callbacks vs the same C profiler alone, long allocation storm, CPU time", "alloc-long", "c-unimpl-chained", "ref", "cpu", 1.05},
	{"a chained native profiler: ObjectAllocated on every allocation vs the same C profiler alone, long allocation storm", "alloc-long", "c-alloc-chained", "ref", "wall", 1.05},
	{"a chained native profiler: ObjectAllocated on every allocation vs the same C profiler alone, long allocation storm, CPU time", "alloc-long", "c-alloc-chained", "ref", "cpu", 1.05},
	{"contprof shipping to Pyroscope and an OTLP Collector (and the directory) vs contprof writing the directory only: CPU-bound", "cpu", "go-contprof-export", "ref", "wall", 1.02},
	{"contprof shipping to Pyroscope and an OTLP Collector vs the directory only: CPU-bound, CPU time", "cpu", "go-contprof-export", "ref", "cpu", 1.02},
	{"contprof shipping to Pyroscope and an OTLP Collector vs the directory only: long allocation storm", "alloc-long", "go-contprof-export", "ref", "wall", 1.02},
	{"contprof shipping to Pyroscope and an OTLP Collector vs the directory only: long allocation storm, CPU time", "alloc-long", "go-contprof-export", "ref", "cpu", 1.02},
	{"contprof shipping to Pyroscope and an OTLP Collector vs the directory only, the exporters' own cost (the output timed by contprof, with exporters minus without, added to the directory-only run): CPU-bound", "cpu", "go-contprof-export", "ref", "wall-output", 1.02},
	{"contprof shipping vs the directory only, the exporters' own cost: CPU-bound, CPU time", "cpu", "go-contprof-export", "ref", "cpu-output", 1.02},
	{"contprof shipping vs the directory only, the exporters' own cost: long allocation storm", "alloc-long", "go-contprof-export", "ref", "wall-output", 1.02},
	{"contprof shipping vs the directory only, the exporters' own cost: long allocation storm, CPU time", "alloc-long", "go-contprof-export", "ref", "cpu-output", 1.02},
	{"continuous profiler (sample/contprof) at its defaults: mcs.exe (a real application) vs no profiler", "mcs", "go-contprof", "none", "wall", 1.03},
	{"continuous profiler (sample/contprof) at its defaults: mcs.exe (a real application) vs no profiler, CPU time", "mcs", "go-contprof", "none", "cpu", 1.03},
	{"continuous profiler (sample/contprof) at its defaults: mcs.exe (a real application), its cost accounted as it ran plus its start-up, vs no profiler", "mcs", "go-contprof", "none", "wall-accounted", 1.03},
	{"continuous profiler (sample/contprof) at its defaults: mcs.exe (a real application), its cost accounted as it ran plus its start-up, vs no profiler, CPU time", "mcs", "go-contprof", "none", "cpu-accounted", 1.03},
	{"CPU sampling (sample/cpuprof) at 99 Hz: mcs.exe (a real application) vs no profiler", "mcs", "cpuprof-99", "none", "wall", 1.02},
	{"CPU sampling (sample/cpuprof) at 99 Hz: mcs.exe (a real application) vs no profiler, CPU time", "mcs", "cpuprof-99", "none", "cpu", 1.02},
	{"CPU sampling (sample/cpuprof) at 99 Hz: mcs.exe (a real application), its cost accounted as it ran plus its start-up, vs no profiler", "mcs", "cpuprof-99", "none", "wall-accounted", 1.02},
	{"CPU sampling (sample/cpuprof) at 99 Hz: mcs.exe (a real application), its cost accounted as it ran plus its start-up, vs no profiler, CPU time", "mcs", "cpuprof-99", "none", "cpu-accounted", 1.02},
	{"the C reference sampler (suspend, walk every thread, resume; ~99 Hz): mcs.exe (a real application) vs no profiler, CPU time: the floor of stopping the world at that rate", "mcs", "c-sample", "none", "cpu", 1.02},
	{"continuous profiler (sample/contprof) at its defaults: Roslyn's csc (a large real application) vs no profiler", "csc", "go-contprof", "none", "wall", 1.03},
	{"continuous profiler (sample/contprof) at its defaults: Roslyn's csc vs no profiler, CPU time", "csc", "go-contprof", "none", "cpu", 1.03},
	{"CPU sampling (sample/cpuprof) at 99 Hz: Roslyn's csc (a large real application) vs no profiler", "csc", "cpuprof-99", "none", "wall", 1.02},
	{"CPU sampling (sample/cpuprof) at 99 Hz: Roslyn's csc vs no profiler, CPU time", "csc", "cpuprof-99", "none", "cpu", 1.02},
}

// WorkloadRuntime names the only runtime of a workload that runs on one:
// its targets are not checked on the others.
var WorkloadRuntime = map[string]string{
	"mcs":     "net8.0.4", // mcs.exe runs on .NET 8 (soak/)
	"mcs-jit": "net8.0.4",
}

// WorkloadFrom names the first major version of the runtimes a workload
// runs on: its targets are not checked before it.
var WorkloadFrom = map[string]int{
	"csc": 10, // compiles against the runtime's reference assemblies (.NET 10 and 11 here)
	// built as runtime async, which is a preview switch on 10
	"async-ra-sync":  11,
	"async-ra-yield": 11,
}

// major is the major version of a runtime version string ("10.0.15").
func major(version string) int {
	n, _ := strconv.Atoi(strings.SplitN(version, ".", 2)[0])
	return n
}

// startupOf names, for a configuration with no row of its own on the
// empty workload, the configuration whose empty-workload median stands for
// its start-up and shutdown: the idle profiler of the same language.
var startupOf = map[string]string{
	"go-alloc-fast":     "go-idle",
	"go-wrap":           "go-wrap-start",
	"go-gohook":         "go-idle", // the Go runtime and instr, no delivery
	"c-gohook":          "go-idle", // the same library
	"go-gohook-noguard": "go-idle",
	"hand":              "none",
	"cpuprof-99":        "cpuprof-99-start",
	"c-alloc":           "c-idle",
	"c-unimpl":          "c-idle",
	"c-unimpl-chained":  "go-idle", // the Go runtime's start-up; the chained C profiler's is c-idle's, about none
	"c-alloc-chained":   "go-idle",

	"go-gohook-deferred":    "go-idle",
	"go-gohook-deferred-x3": "go-idle",
	"c-gohook-x3":           "go-idle",
}

// slopeOf names, for a configuration of the "-slope" metrics, its twin
// doing less of the same work on the same workload (the same program
// making fewer calls).
var slopeOf = map[string]string{
	"go-gohook-deferred-x3": "go-gohook-deferred",
	"c-gohook-x3":           "c-gohook",
}

// StartupOf is the configuration whose median on the empty workload is
// taken out of config's for the "start-up taken out" metrics: config itself
// where it runs on the empty workload, else its idle twin.
func StartupOf(config string) string {
	if s, ok := startupOf[config]; ok {
		return s
	}
	return config
}

// Outcome is a target checked on one runtime.
type Outcome struct {
	Target   Target
	Runtime  string
	Measured float64
	OK       bool   // measured
	Met      bool   // within the limit, and valid
	Note     string // why not measured, or the noise
	// Invalid says why the measurement does not count (the row or its
	// baseline did not do the whole work; see Validity): never met.
	Invalid string
}

// Check evaluates every target on every runtime of r.
func Check(r *Report) []Outcome {
	var out []Outcome
	for _, t := range Targets {
		for _, rt := range r.Runtimes {
			if only, ok := WorkloadRuntime[t.Workload]; ok && rt.Name != only {
				continue // the workload runs on one runtime only
			}
			if from, ok := WorkloadFrom[t.Workload]; ok && major(rt.Version) < from {
				continue
			}
			o := Outcome{Target: t, Runtime: rt.Name}
			row := r.Row(rt.Name, t.Workload, t.Config)
			switch {
			case row == nil:
				o.Note = "no such row in this run"
			case row.Skipped != "":
				o.Note = row.Skipped
			case len(row.Runs) == 0:
				o.Note = "no runs"
			}
			if o.Note != "" {
				out = append(out, o)
				continue
			}
			base := r.Row(rt.Name, t.Workload, "none")
			if t.Against == "ref" {
				base = r.Row(rt.Name, t.Workload, row.Ref)
			}
			if base == nil || len(base.Runs) == 0 {
				o.Note = "no baseline row"
				out = append(out, o)
				continue
			}
			m, b := row.Median(), base.Median()
			what := ""
			slopeInvalid := ""
			steady := t.Metric == "wall-steady" || t.Metric == "cpu-steady"
			slope := t.Metric == "wall-slope" || t.Metric == "cpu-slope"
			if steady || slope {
				// The same ratio with each configuration's twin taken
				// out: for steady, its median on the empty workload
				// (start-up and shutdown); for slope, its twin doing
				// less of the same work on the same workload (the cost
				// of the work between, without anything paid once a
				// run).
				re, be := r.Row(rt.Name, "empty", StartupOf(row.Config)), r.Row(rt.Name, "empty", StartupOf(base.Config))
				missing := "no empty-workload rows to take start-up out"
				if slope {
					re, be = r.Row(rt.Name, t.Workload, slopeOf[row.Config]), r.Row(rt.Name, t.Workload, slopeOf[base.Config])
					missing = "no rows of the shorter twins " + slopeOf[row.Config] + ", " + slopeOf[base.Config]
				}
				if re == nil || be == nil || len(re.Runs) == 0 || len(be.Runs) == 0 {
					o.Note = missing
					out = append(out, o)
					continue
				}
				rm, bm := re.Median(), be.Median()
				num, den := m.Wall-rm.Wall, b.Wall-bm.Wall
				if strings.HasPrefix(t.Metric, "cpu-") {
					num, den = m.CPU-rm.CPU, b.CPU-bm.CPU
				}
				if den > 0 && (steady || num > 0) {
					o.Measured, o.OK = float64(num)/float64(den), true
				}
				if slope {
					ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
					what = fmt.Sprintf("%s beyond %s against %s beyond %s", ms(num), re.Config, ms(den), be.Config)
					if !o.OK {
						what = "nothing to measure (" + what + ")"
					}
					what += "; "
					for _, x := range []*Row{re, be} {
						if why := invalid(x); why != "" && slopeInvalid == "" {
							slopeInvalid = x.Config + ": " + why
						}
					}
				}
			}
			switch t.Metric {
			case "wall", "cpu":
				o.Measured, o.OK = Ratio(row, base, t.Metric == "cpu")
			case "wall-delta":
				o.Measured, o.OK = float64(m.Wall-b.Wall)/float64(time.Millisecond), true
			case "cpu-delta":
				o.Measured, o.OK = float64(m.CPU-b.CPU)/float64(time.Millisecond), true
			case "rss-delta":
				o.Measured, o.OK = float64(m.MaxRSS-b.MaxRSS)/(1<<20), true
			case "wall-accounted", "cpu-accounted":
				cpu := t.Metric == "cpu-accounted"
				key, den := "cost_wall_us", b.Wall
				if cpu {
					key, den = "cost_cpu_us", b.CPU
				}
				re, be := r.Row(rt.Name, "empty", StartupOf(row.Config)), r.Row(rt.Name, "empty", StartupOf(base.Config))
				if re == nil || be == nil || len(re.Runs) == 0 || len(be.Runs) == 0 {
					o.Note = "no empty-workload rows for the start-up"
					out = append(out, o)
					continue
				}
				rc, rok := medianCount(row, key)
				ec, eok := medianCount(re, key)
				if !rok || !eok {
					o.Note = "no " + key + " counts"
					out = append(out, o)
					continue
				}
				start := re.Median().Wall - be.Median().Wall
				if cpu {
					start = re.Median().CPU - be.Median().CPU
				}
				start -= time.Duration(ec) * time.Microsecond
				here := time.Duration(rc) * time.Microsecond
				if den > 0 {
					o.Measured, o.OK = float64(den+start+here)/float64(den), true
					ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
					what = fmt.Sprintf("start-up %s + %s accounted (medians of %d and %d runs) on %s; ", ms(start), ms(here), len(re.Runs), len(row.Runs), ms(den))
				}
			case "wall-output", "cpu-output":
				key, den := "output_wall_us", b.Wall
				if t.Metric == "cpu-output" {
					key, den = "output_cpu_us", b.CPU
				}
				ro, rok := medianCount(row, key)
				bo, bok := medianCount(base, key)
				if !rok || !bok {
					o.Note = "no " + key + " counts"
					out = append(out, o)
					continue
				}
				if den > 0 {
					extra := time.Duration(ro-bo) * time.Microsecond
					o.Measured, o.OK = float64(den+extra)/float64(den), true
					us := func(v int64) time.Duration { return (time.Duration(v) * time.Microsecond).Round(10 * time.Microsecond) }
					what = fmt.Sprintf("output %v against %v (medians of %d and %d runs); ", us(ro), us(bo), len(row.Runs), len(base.Runs))
				}
			}
			o.Note = what + fmt.Sprintf("noise ±%.1f%% / ±%.1f%%", 100*row.Spread(), 100*base.Spread())
			if why := invalid(row); why != "" {
				o.Invalid = why
			} else if why := invalid(base); why != "" {
				o.Invalid = "its baseline " + base.Config + ": " + why
			} else if slopeInvalid != "" {
				o.Invalid = slopeInvalid
			}
			o.Met = o.OK && o.Invalid == "" && o.Measured <= t.Limit
			out = append(out, o)
		}
	}
	return out
}

// medianCount is the median over a row's runs of a count each run
// reported (false if a run did not report it).
func medianCount(r *Row, key string) (int64, bool) {
	var xs []int64
	for _, x := range r.Runs {
		v, ok := countOf(x.Counts, key)
		if !ok {
			return 0, false
		}
		xs = append(xs, v)
	}
	if len(xs) == 0 {
		return 0, false
	}
	return median(xs), true
}

// countOf returns the value of key in a "k=v k=v" count line (0, false if
// absent).
func countOf(counts, key string) (int64, bool) {
	for _, f := range strings.Fields(counts) {
		if k, v, ok := strings.Cut(f, "="); ok && k == key {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return n, true
			}
		}
	}
	return 0, false
}

// formatting helpers shared by the markdown writer

func fmtDur(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	default:
		return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
	}
}

func fmtMiB(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

func fmtRatio(x float64, ok bool) string {
	if !ok {
		return "–"
	}
	return fmt.Sprintf("%.2f×", x)
}

// mdEscape keeps a table cell on one line and its pipes literal.
func mdEscape(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	return strings.ReplaceAll(s, "\n", " ")
}
