package heapsnap

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// graph is a test heap: objects 1..n at addresses 16*i, type i%types.
type graph struct {
	n       int
	refs    map[int][]int
	roots   []bRoot
	statics []bStatic
}

func (g graph) build(t testing.TB) *Snapshot {
	b := NewBuilder()
	for ty := range 3 {
		b.Type(uint64(ty), fmt.Sprintf("T%d", ty))
	}
	// added in reverse address order: Build sorts
	for i := g.n; i >= 1; i-- {
		var rs []uint64
		for _, r := range g.refs[i] {
			rs = append(rs, uint64(16*r))
		}
		b.Object(uint64(16*i), uint64(i%3), uint64(8*i), rs)
	}
	for _, r := range g.roots {
		b.Root(r.addr, r.kind)
	}
	for _, st := range g.statics {
		b.Static(st.target, st.slot, st.name)
	}
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// bruteIdom computes immediate dominators by definition: d dominates v
// when v is not reachable from the roots once d is removed; the immediate
// dominator is the strict dominator every other strict dominator
// dominates. -1: unreachable or held by roots directly.
func bruteIdom(s *Snapshot) []int {
	n := s.NumObjects()
	reach := func(removed int) []bool {
		seen := make([]bool, n)
		var st []int
		for _, r := range s.roots {
			if r.Kind.Strong() && int(r.Object) != removed && !seen[r.Object] {
				seen[r.Object] = true
				st = append(st, int(r.Object))
			}
		}
		for len(st) > 0 {
			v := st[len(st)-1]
			st = st[:len(st)-1]
			for _, w := range s.Refs(v) {
				if int(w) != removed && !seen[w] {
					seen[w] = true
					st = append(st, int(w))
				}
			}
		}
		return seen
	}
	all := reach(-1)
	doms := make([][]int, n) // strict dominators
	for d := range n {
		without := reach(d)
		for v := range n {
			if v != d && all[v] && !without[v] {
				doms[v] = append(doms[v], d)
			}
		}
	}
	idom := make([]int, n)
	for v := range n {
		idom[v] = -1
		for _, d := range doms[v] {
			// the immediate one is dominated by all the others
			ok := true
			for _, e := range doms[v] {
				if e != d && !contains(doms[d], e) {
					ok = false
				}
			}
			if ok {
				idom[v] = d
			}
		}
	}
	return idom
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func randomGraph(r *rand.Rand, n, edges, roots int) graph {
	g := graph{n: n, refs: map[int][]int{}}
	for range edges {
		from, to := 1+r.IntN(n), 1+r.IntN(n)
		g.refs[from] = append(g.refs[from], to)
	}
	for range roots {
		g.roots = append(g.roots, bRoot{uint64(16 * (1 + r.IntN(n))), RootKind(r.IntN(int(numRootKinds)))})
	}
	for i := range r.IntN(3) {
		// a static in object h's storage (objects are 8*h bytes long)
		// naming an object h references, or one nothing holds
		h := 1 + r.IntN(n)
		to := 1 + r.IntN(n)
		if rs := g.refs[h]; len(rs) > 0 {
			to = rs[0]
		}
		g.statics = append(g.statics, bStatic{uint64(16 * to), uint64(16*h + 4), fmt.Sprint("S.F", i)})
	}
	return g
}

func checkAgainstBrute(t *testing.T, s *Snapshot) {
	t.Helper()
	a := s.Analyze()
	want := bruteIdom(s)
	for o := range s.NumObjects() {
		d, _, _ := a.Dominator(o)
		if d != want[o] {
			t.Fatalf("object %d: idom %d, by definition %d (reachable %v)", o, d, want[o], a.Reachable(o))
		}
	}
	// retained = own size + the retained sizes of the objects it
	// immediately dominates
	for o := range s.NumObjects() {
		if !a.Reachable(o) {
			continue
		}
		sum := s.size[o]
		for x := range s.NumObjects() {
			if d, _, _ := a.Dominator(x); d == o && a.Reachable(x) {
				sum += a.Retained(x)
			}
		}
		if sum != a.Retained(o) {
			t.Fatalf("object %d: retained %d, children sum %d", o, a.Retained(o), sum)
		}
	}
}

func TestDominatorsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		n := 1 + r.IntN(40)
		g := randomGraph(r, n, r.IntN(3*n+1), 1+r.IntN(4))
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkAgainstBrute(t, g.build(t)) })
	}
}

func FuzzDominators(f *testing.F) {
	f.Add([]byte{5, 1, 2, 2, 3, 3, 1, 4, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		n := 1 + int(data[0])%24
		g := graph{n: n, refs: map[int][]int{}}
		g.roots = append(g.roots, bRoot{uint64(16 * (1 + int(data[1])%n)), RootKind(data[1] % byte(numRootKinds))})
		for i := 2; i+1 < len(data); i += 2 {
			from, to := 1+int(data[i])%n, 1+int(data[i+1])%n
			if data[i]&0x80 != 0 {
				g.roots = append(g.roots, bRoot{uint64(16 * to), RootKind(data[i] % byte(numRootKinds))})
				continue
			}
			g.refs[from] = append(g.refs[from], to)
		}
		checkAgainstBrute(t, g.build(t))
	})
}

// leak builds the shape of the shop's /leak endpoint: a static List<Leaked>
// whose array holds Leaked objects, each with a byte[]; beside it, other
// objects on the stack.
func leak(t testing.TB, leaked int) *Snapshot {
	b := NewBuilder()
	b.Type(1, "System.Collections.Generic.List`1[Shop.Leaked]")
	b.Type(2, "Shop.Leaked[]")
	b.Type(3, "Shop.Leaked")
	b.Type(4, "System.Byte[]")
	b.Type(5, "System.String")
	addr := uint64(0x1000)
	next := func() uint64 { addr += 0x100; return addr }
	list, arr := next(), next()
	b.Object(list, 1, 32, []uint64{arr})
	var items []uint64
	for range leaked {
		it, data := next(), next()
		items = append(items, it)
		b.Object(it, 3, 24, []uint64{data})
		b.Object(data, 4, 65536+24, nil)
	}
	b.Object(arr, 2, uint64(32+8*leaked), items)
	// the runtime's statics array, held by a handle, holds the list
	holder := next()
	b.Type(6, "System.Object[]")
	b.Object(holder, 6, 64, []uint64{list})
	b.Root(holder, RootHandle)
	b.Static(list, holder+16, "Shop.Work.Leak")
	s1 := next()
	b.Object(s1, 5, 40, nil)
	b.Root(s1, RootStack)
	b.Root(s1, RootHandle)       // held by two kinds
	b.Object(next(), 5, 50, nil) // garbage
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLeakReport(t *testing.T) {
	s := leak(t, 100)
	a := s.Analyze()
	var buf bytes.Buffer
	if err := a.Report(&buf, 5); err != nil {
		t.Fatal(err)
	}
	rep := buf.String()
	t.Log(rep)
	leakedBytes := uint64(100 * (24 + 65536 + 24))
	top := a.TypesByRetained()[0]
	if top.Name != "System.Collections.Generic.List`1[Shop.Leaked]" || top.Retained < leakedBytes {
		t.Errorf("top type %+v, want the list retaining >= %d", top, leakedBytes)
	}
	want := "[static] → Shop.Work.Leak → System.Collections.Generic.List`1[Shop.Leaked] → Shop.Leaked[] → Shop.Leaked → System.Byte[]"
	found := false
	for _, p := range a.Paths() {
		if strings.Join(p.Frames, " → ") == want {
			found = true
			if p.Count != 100 || p.Shallow != 100*(65536+24) {
				t.Errorf("path %s: %d objects, %d bytes", want, p.Count, p.Shallow)
			}
		}
	}
	if !found {
		t.Errorf("no path %s in %v", want, a.Paths())
	}
	if !strings.Contains(rep, "[static] → Shop.Work.Leak → System.Collections.Generic.List`1[Shop.Leaked]") ||
		!strings.Contains(rep, "unreachable from a strong root: 1 objects, 50 B") {
		t.Errorf("report:\n%s", rep)
	}
	// the string held by a stack root and a handle hangs under "[roots]"
	if a.PathString(s.NumObjects()-2) != "[roots: handle, stack] → System.String" {
		t.Errorf("string held twice: %s", a.PathString(s.NumObjects()-2))
	}

	p := a.Profile(time.Unix(1, 0))
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	// the flame graph's property: the shallow bytes of every sample whose
	// stack starts with the list's path sum to what the list retains
	var under, total int64
	for _, smp := range p.Sample {
		total += smp.Value[1]
		n := len(smp.Location)
		if n >= 3 && smp.Location[n-3].Line[0].Function.Name == "System.Collections.Generic.List`1[Shop.Leaked]" {
			under += smp.Value[1]
		}
	}
	listIdx, _ := s.Find(0x1100)
	if uint64(under) != a.Retained(listIdx) {
		t.Errorf("shallow under the list %d, list retains %d", under, a.Retained(listIdx))
	}
	if uint64(total) != s.TotalBytes()-a.UnreachableBytes {
		t.Errorf("profile total %d, reachable bytes %d", total, s.TotalBytes()-a.UnreachableBytes)
	}
}

func TestDiffNamesGrowth(t *testing.T) {
	before, after := leak(t, 10).Analyze(), leak(t, 60).Analyze()
	d := Diff(before, after)
	if d.Types[0].Name != "System.Byte[]" || d.Types[0].Count != 50 || d.Types[0].Shallow != 50*(65536+24) {
		t.Errorf("first grown type %+v", d.Types[0])
	}
	if got := strings.Join(d.Paths[0].Frames, " → "); !strings.HasSuffix(got, "Shop.Leaked → System.Byte[]") || d.Paths[0].Count != 50 {
		t.Errorf("first grown path %s (%+v)", got, d.Paths[0])
	}
	var buf bytes.Buffer
	if err := d.Report(&buf, 3); err != nil {
		t.Fatal(err)
	}
	t.Log(buf.String())
}

// TestDeepList: a linked list of 300,000 nodes is walked without recursion,
// and its path is one folded frame.
func TestDeepList(t *testing.T) {
	b := NewBuilder()
	b.Type(1, "Node")
	const n = 300000
	for i := 1; i <= n; i++ {
		var refs []uint64
		if i < n {
			refs = []uint64{uint64(16 * (i + 1))}
		}
		b.Object(uint64(16*i), 1, 24, refs)
	}
	b.Root(16, RootStatic)
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	a := s.Analyze()
	if a.Retained(0) != 24*n || a.Types[0].Retained != 24*n {
		t.Errorf("head retains %d, type %d; want %d", a.Retained(0), a.Types[0].Retained, 24*n)
	}
	ps := a.Paths()
	if len(ps) != 1 || strings.Join(ps[0].Frames, "/") != "[static]/Node" || ps[0].Count != n || ps[0].Retained != 24*n {
		t.Errorf("paths %+v", ps[0])
	}
	if got := a.PathString(n - 1); got != fmt.Sprintf("[static] → Node ×%d", n) {
		t.Errorf("path %s", got)
	}
}

func TestBuilderUnresolvedAndDuplicate(t *testing.T) {
	b := NewBuilder()
	b.Object(0x10, 7, 8, []uint64{0x20, 0x999, 0})
	b.Object(0x20, 7, 8, nil)
	b.Root(0x10, RootStack)
	b.Root(0x777, RootStack)
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if s.Unresolved != 2 || s.Types[0].Name != "<unknown type 0x7>" || len(s.Refs(0)) != 1 {
		t.Errorf("unresolved %d, types %v, refs %v", s.Unresolved, s.Types, s.Refs(0))
	}
	b = NewBuilder()
	b.Object(0x10, 1, 8, nil)
	b.Object(0x10, 1, 16, nil)
	if _, err := b.Build(); err == nil {
		t.Error("two different objects at one address: no error")
	}
	// the same object reported twice is one, with its references
	b = NewBuilder()
	b.Object(0x10, 1, 8, nil)
	b.Object(0x10, 1, 8, []uint64{0x20})
	b.Object(0x20, 1, 8, nil)
	if s, err := b.Build(); err != nil || s.NumObjects() != 2 || len(s.Refs(0)) != 1 {
		t.Errorf("object reported twice: %v", err)
	}
}
