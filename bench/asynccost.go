package bench

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// An AsyncCost is one row of the async wrap's per-call table: what a
// configuration of an async-* workload takes per call beyond the same
// workload without instrumentation (none), in whole-process wall and CPU
// time (medians), with the start-up of its profiler taken out where the
// report has it (the empty workload's go-wrap-start minus none).
type AsyncCost struct {
	Runtime, Workload, Config string
	Calls                     int64
	// NoneWall and NoneCPU are none's medians per call.
	NoneWall, NoneCPU float64 // ns
	// Wall and CPU are the configuration's medians less none's, per call.
	Wall, CPU float64 // ns
	// StartupOut says whether a profiler's start-up was taken out.
	StartupOut bool
	// Spread is the configuration's noise and NoneSpread none's
	// (Row.Spread, of the wall times); CPUSpread and NoneCPUSpread the
	// same of the CPU times.
	Spread, NoneSpread, CPUSpread, NoneCPUSpread float64
	Invalid                                      string
}

// AsyncCosts computes the per-call table of the async-* workloads in r
// (N, the number of calls, is the workload's first argument).
func AsyncCosts(r *Report) []AsyncCost {
	var out []AsyncCost
	for _, rt := range r.Runtimes {
		var startWall, startCPU time.Duration
		haveStart := false
		if s, n := r.Row(rt.Name, "empty", "go-wrap-start"), r.Row(rt.Name, "empty", "none"); s != nil && n != nil && len(s.Runs) > 0 && len(n.Runs) > 0 {
			startWall, startCPU = s.Median().Wall-n.Median().Wall, s.Median().CPU-n.Median().CPU
			haveStart = true
		}
		for _, w := range r.Workloads {
			if !strings.HasPrefix(w.Name, "async-") {
				continue
			}
			f := strings.Fields(w.Args)
			if len(f) == 0 {
				continue
			}
			calls, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil || calls <= 0 {
				continue
			}
			none := r.Row(rt.Name, w.Name, "none")
			if none == nil || len(none.Runs) == 0 {
				continue
			}
			nm := none.Median()
			for i := range r.Rows {
				row := &r.Rows[i]
				if row.Runtime != rt.Name || row.Workload != w.Name || row.Config == "none" || len(row.Runs) == 0 {
					continue
				}
				m := row.Median()
				dw, dc := m.Wall-nm.Wall, m.CPU-nm.CPU
				c := AsyncCost{Runtime: rt.Name, Workload: w.Name, Config: row.Config, Calls: calls,
					NoneWall: float64(nm.Wall) / float64(calls), NoneCPU: float64(nm.CPU) / float64(calls),
					Spread: row.Spread(), NoneSpread: none.Spread(), CPUSpread: cpuSpread(row), NoneCPUSpread: cpuSpread(none),
					Invalid: row.Invalid}
				if strings.HasPrefix(row.Config, "go-") && haveStart {
					dw, dc = dw-startWall, dc-startCPU
					c.StartupOut = true
				}
				c.Wall, c.CPU = float64(dw)/float64(calls), float64(dc)/float64(calls)
				out = append(out, c)
			}
		}
	}
	return out
}

// asyncCostMarkdown renders AsyncCosts as a table ("" when there is
// nothing to show).
func asyncCostMarkdown(r *Report) string {
	cs := AsyncCosts(r)
	if len(cs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Async wrap per call\n\n")
	b.WriteString("The async-* workloads: what each configuration takes per call beyond the same workload without instrumentation (medians of whole-process wall and CPU time, divided by the calls; a profiler's start-up, the empty workload's go-wrap-start minus none, taken out where this run has it). The noise is each row's spread (Row.Spread) of wall / CPU times, none's in parentheses.\n\n")
	b.WriteString("| runtime | workload | calls | none per call (wall / CPU) | configuration | wall ns/call | CPU ns/call | noise, wall / CPU |\n|---|---|---|---|---|---|---|---|\n")
	for _, c := range cs {
		name := c.Config
		if c.StartupOut {
			name += " (start-up out)"
		}
		if c.Invalid != "" {
			name += " (**invalid**)"
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %.0f / %.0f ns | %s | %+.0f | %+.0f | ±%.1f%% / ±%.1f%% (±%.1f%% / ±%.1f%%) |\n",
			c.Runtime, c.Workload, c.Calls, c.NoneWall, c.NoneCPU, name, c.Wall, c.CPU,
			100*c.Spread, 100*c.CPUSpread, 100*c.NoneSpread, 100*c.NoneCPUSpread)
	}
	b.WriteString("\n")
	return b.String()
}

// cpuSpread is Row.Spread of the CPU times.
func cpuSpread(r *Row) float64 {
	cp := Row{Runs: make([]Run, len(r.Runs))}
	for i, x := range r.Runs {
		cp.Runs[i] = Run{Wall: x.CPU}
	}
	return cp.Spread()
}
