package bench

import (
	"bytes"
	"errors"
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
		"| allocations, synchronous Go handler (guarded) vs C | rt | 1.400× | 1.500× | met |",
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
