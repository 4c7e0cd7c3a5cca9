package heapsnap

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/pprof/profile"
)

// Profile returns the analysis as a pprof profile with the sample types
// objects/count, shallow/bytes and retained/bytes: one sample per
// retention path (Paths), its stack the path from the root kind (outermost
// frame) to the objects' type (the leaf). In a flame graph of shallow
// bytes, a frame's total is what the objects along that path retain;
// retained/bytes counts at each path what its first objects retain, so
// summing it up a stack counts nested bytes again: read it per path
// (pprof's flat view), not as a flame graph.
func (a *Analysis) Profile(when time.Time) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "objects", Unit: "count"},
			{Type: "shallow", Unit: "bytes"},
			{Type: "retained", Unit: "bytes"},
		},
		DefaultSampleType: "shallow",
		TimeNanos:         when.UnixNano(),
	}
	locs := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l := locs[name]; l != nil {
			return l
		}
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
		p.Function = append(p.Function, f)
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f}}}
		p.Location = append(p.Location, l)
		locs[name] = l
		return l
	}
	for _, ps := range a.Paths() {
		smp := &profile.Sample{Value: []int64{int64(ps.Count), int64(ps.Shallow), int64(ps.Retained)}}
		for i := len(ps.Frames) - 1; i >= 0; i-- {
			smp.Location = append(smp.Location, loc(ps.Frames[i]))
		}
		p.Sample = append(p.Sample, smp)
	}
	keys := make([]string, 0, len(a.S.Meta))
	for k := range a.S.Meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		p.Comments = append(p.Comments, k+": "+a.S.Meta[k])
	}
	p.Comments = append(p.Comments,
		fmt.Sprintf("objects %d, bytes %d, unreachable %d (%d bytes), unresolved references %d",
			a.S.NumObjects(), a.S.TotalBytes(), a.UnreachableObjects, a.UnreachableBytes, a.S.Unresolved))
	return p
}

// PathString renders object o's retention path: the root kind, then each
// dominating object's type down to o's, repeated types folded ("Node ×3").
func (a *Analysis) PathString(o int) string {
	chain := a.Chain(o)
	var parts []string
	if _, kind, several := a.Dominator(chain[0]); several {
		parts = append(parts, a.held[int32(chain[0])])
	} else {
		parts = append(parts, "["+kind.String()+"]")
		if f := a.StaticField(chain[0]); f != "" {
			parts = append(parts, f)
		}
	}
	run := 0
	for i, x := range chain {
		name := a.S.Types[a.S.typ[x]].Name
		run++
		if i+1 < len(chain) && a.S.Types[a.S.typ[chain[i+1]]].Name == name {
			continue
		}
		if run > 1 {
			name = fmt.Sprintf("%s ×%d", name, run)
		}
		parts = append(parts, name)
		run = 0
	}
	return strings.Join(parts, " → ")
}

// Report writes a short text report: totals, the types retaining most, and
// the largest retainers with their paths from a root.
func (a *Analysis) Report(w io.Writer, top int) error {
	s := a.S
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	keys := make([]string, 0, len(s.Meta))
	for k := range s.Meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "%s: %s\n", k, s.Meta[k])
	}
	fmt.Fprintf(w, "heap: %d objects, %s in %d types; unreachable from a strong root: %d objects, %s; unresolved references: %d\n",
		s.NumObjects(), bytesString(s.TotalBytes()), countTypes(a), a.UnreachableObjects, bytesString(a.UnreachableBytes), s.Unresolved)
	var rk []string
	for k := range numRootKinds {
		if a.RootCounts[k] > 0 {
			rk = append(rk, fmt.Sprintf("%s %d", k, a.RootCounts[k]))
		}
	}
	fmt.Fprintf(w, "roots: %s\n\n", strings.Join(rk, ", "))

	fmt.Fprintf(w, "Types by retained size (top %d):\n", top)
	fmt.Fprintln(tw, "retained\tshallow\tcount\t \ttype\t")
	for i, t := range a.TypesByRetained() {
		if i >= top {
			break
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t \t%s\t\n", bytesString(t.Retained), bytesString(t.Shallow), t.Count, t.Name)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nLargest retainers (top %d, none inside another):\n", top)
	for _, o := range a.LargestRetainers(top) {
		addr, _, _ := s.Object(o)
		fmt.Fprintf(w, "%10s  %s @%#x\n            %s\n", bytesString(a.Retained(o)), s.Types[s.typ[o]].Name, addr, a.PathString(o))
	}
	return nil
}

func countTypes(a *Analysis) int {
	n := 0
	for _, t := range a.Types {
		if t.Count > 0 {
			n++
		}
	}
	return n
}

func bytesString(b uint64) string {
	switch {
	case b >= 10<<20:
		return fmt.Sprintf("%.1f MB", float64(b)/(1<<20))
	case b >= 10<<10:
		return fmt.Sprintf("%.1f KB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

// TypeDiff is one type's change between two snapshots.
type TypeDiff struct {
	Name                          string
	Count                         int // after - before
	Shallow, Retained             int64
	BeforeCount, AfterCount       int
	BeforeShallow, AfterShallow   uint64
	BeforeRetained, AfterRetained uint64
}

// PathDiff is one retention path's change in shallow bytes and objects.
type PathDiff struct {
	Frames  []string
	Count   int
	Shallow int64
}

// Difference is what changed from one snapshot to another, by type and by
// retention path, each sorted by shallow bytes grown, largest first.
type Difference struct {
	Types []TypeDiff
	Paths []PathDiff
}

// Diff compares two analyses by type name and by retention path.
func Diff(before, after *Analysis) *Difference {
	d := &Difference{}
	byName := map[string]*TypeDiff{}
	get := func(name string) *TypeDiff {
		t := byName[name]
		if t == nil {
			t = &TypeDiff{Name: name}
			byName[name] = t
		}
		return t
	}
	for _, t := range before.Types {
		x := get(t.Name)
		x.BeforeCount += t.Count
		x.BeforeShallow += t.Shallow
		x.BeforeRetained += t.Retained
	}
	for _, t := range after.Types {
		x := get(t.Name)
		x.AfterCount += t.Count
		x.AfterShallow += t.Shallow
		x.AfterRetained += t.Retained
	}
	for _, t := range byName {
		t.Count = t.AfterCount - t.BeforeCount
		t.Shallow = int64(t.AfterShallow) - int64(t.BeforeShallow)
		t.Retained = int64(t.AfterRetained) - int64(t.BeforeRetained)
		if t.Count != 0 || t.Shallow != 0 || t.Retained != 0 {
			d.Types = append(d.Types, *t)
		}
	}
	slices.SortFunc(d.Types, func(x, y TypeDiff) int {
		return cmp.Or(cmp.Compare(y.Shallow, x.Shallow), cmp.Compare(x.Name, y.Name))
	})
	paths := map[string]*PathDiff{}
	for sign, a := range []*Analysis{before, after} {
		for key, p := range a.paths {
			x := paths[key]
			if x == nil {
				x = &PathDiff{Frames: p.Frames}
				paths[key] = x
			}
			if sign == 0 {
				x.Count -= p.Count
				x.Shallow -= int64(p.Shallow)
			} else {
				x.Count += p.Count
				x.Shallow += int64(p.Shallow)
			}
		}
	}
	for _, p := range paths {
		if p.Count != 0 || p.Shallow != 0 {
			d.Paths = append(d.Paths, *p)
		}
	}
	slices.SortFunc(d.Paths, func(x, y PathDiff) int {
		return cmp.Or(cmp.Compare(y.Shallow, x.Shallow), cmp.Compare(strings.Join(x.Frames, "/"), strings.Join(y.Frames, "/")))
	})
	return d
}

// Report writes the types that grew most and the retention paths that
// hold the growth.
func (d *Difference) Report(w io.Writer, top int) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "Types grown by shallow size (top %d):\n", top)
	fmt.Fprintln(tw, "Δshallow\tΔretained\tΔcount\tcount after\t \ttype\t")
	for i, t := range d.Types {
		if i >= top || t.Shallow <= 0 {
			break
		}
		fmt.Fprintf(tw, "%+d\t%+d\t%+d\t%d\t \t%s\t\n", t.Shallow, t.Retained, t.Count, t.AfterCount, t.Name)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nWhat holds the growth (retention paths, top %d):\n", top)
	for i, p := range d.Paths {
		if i >= top || p.Shallow <= 0 {
			break
		}
		fmt.Fprintf(w, "%+12d B %+8d objects  %s\n", p.Shallow, p.Count, strings.Join(p.Frames, " → "))
	}
	return nil
}
