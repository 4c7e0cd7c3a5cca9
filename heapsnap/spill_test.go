package heapsnap

import (
	"math/rand/v2"
	"os"
	"reflect"
	"testing"
)

// feed reports a random heap to b, in a random order, with objects
// reported twice (some with, some without their references), null and
// unresolvable references, roots and static fields.
func feed(r *rand.Rand, b *Builder, n int) {
	type obj struct {
		addr, typ, size uint64
		refs            []uint64
	}
	objs := make([]obj, n)
	for i := range objs {
		o := obj{addr: uint64(64 * (i + 1)), typ: uint64(r.IntN(5)), size: uint64(8 + 8*r.IntN(4))}
		for range r.IntN(4) {
			switch r.IntN(10) {
			case 0:
				o.refs = append(o.refs, 0)
			case 1:
				o.refs = append(o.refs, 12345) // not an object
			default:
				o.refs = append(o.refs, uint64(64*(1+r.IntN(n))))
			}
		}
		objs[i] = o
	}
	r.Shuffle(len(objs), func(i, j int) { objs[i], objs[j] = objs[j], objs[i] })
	for t := range 5 {
		if r.IntN(2) == 0 {
			b.Type(uint64(t), string(rune('A'+t)))
		}
	}
	for i, o := range objs {
		b.Object(o.addr, o.typ, o.size, o.refs)
		if i%7 == 0 {
			// reported again: without references, or with them
			if r.IntN(2) == 0 {
				b.Object(o.addr, o.typ, o.size, nil)
			} else {
				b.Object(o.addr, o.typ, o.size, o.refs)
			}
		}
		if r.IntN(5) == 0 {
			b.Root(o.addr, RootKind(r.IntN(int(numRootKinds))))
		}
	}
	b.Root(777, RootStack)
	b.Static(uint64(64*(1+r.IntN(n))), uint64(64*(1+r.IntN(n))+8), "S.F")
	b.SetMeta("k", "v")
}

// TestSpillSameSnapshot: a Builder that spills to disk builds exactly the
// snapshot of one that does not, whenever it starts spilling, and leaves
// no file behind.
func TestSpillSameSnapshot(t *testing.T) {
	for seed := range uint64(30) {
		n := 1 + int(seed)*37
		for _, after := range []int{1, 5, n / 2, n + 100} {
			want := NewBuilder()
			feed(rand.New(rand.NewPCG(seed, 1)), want, n)
			ws, werr := want.Build()

			dir := t.TempDir()
			got := NewBuilderWith(BuilderOptions{SpillDir: dir, SpillAfter: after})
			feed(rand.New(rand.NewPCG(seed, 1)), got, n)
			spilled := got.sp != nil
			gs, gerr := got.Build()
			if (werr == nil) != (gerr == nil) {
				t.Fatalf("seed %d after %d: errors %v and %v", seed, after, werr, gerr)
			}
			if werr != nil {
				continue
			}
			reports, limit := n+(n+6)/7, after // feed reports every 7th object twice
			if limit <= 0 {
				limit = 1_000_000
			}
			if spilled != (reports > limit) {
				t.Errorf("seed %d after %d (n %d): spilled %v", seed, after, n, spilled)
			}
			if spilled {
				if gs.Meta["spill"] == "" {
					t.Errorf("seed %d after %d: the snapshot does not say it spilled", seed, after)
				}
				delete(gs.Meta, "spill")
			}
			if !reflect.DeepEqual(ws, gs) {
				t.Fatalf("seed %d after %d: snapshots differ\nin memory: %+v\nspilled:   %+v", seed, after, ws, gs)
			}
			if files, _ := os.ReadDir(dir); len(files) != 0 {
				t.Fatalf("seed %d after %d: left %v", seed, after, files)
			}
		}
	}
}

// TestSpillDiscard: Discard removes the spill file.
func TestSpillDiscard(t *testing.T) {
	dir := t.TempDir()
	b := NewBuilderWith(BuilderOptions{SpillDir: dir, SpillAfter: 2})
	feed(rand.New(rand.NewPCG(1, 2)), b, 50)
	if files, _ := os.ReadDir(dir); len(files) != 1 {
		t.Fatalf("spill files: %v", files)
	}
	b.Discard()
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Fatalf("left after Discard: %v", files)
	}
}

// TestSpillDirMissing: a spill that cannot start leaves the Builder in
// memory, and the snapshot says so.
func TestSpillDirMissing(t *testing.T) {
	b := NewBuilderWith(BuilderOptions{SpillDir: "/nonexistent/heapsnap", SpillAfter: 2})
	feed(rand.New(rand.NewPCG(1, 3)), b, 20)
	s, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if s.NumObjects() != 20 || s.Meta["spill"] == "" {
		t.Errorf("%d objects, meta %v", s.NumObjects(), s.Meta)
	}
}
