package heapsnap

import (
	"cmp"
	"slices"
	"strings"
)

// Analysis is a snapshot's dominator tree and what follows from it.
type Analysis struct {
	S *Snapshot

	// idom[o] is object o's immediate dominator: another object, a root
	// kind node (n+kind: o is held by roots of one kind only), the
	// super-root (n+numRootKinds: by roots of several kinds), or -1:
	// unreachable from a strong root.
	idom     []int32
	retained []uint64 // per object
	order    []int32  // reached nodes in DFS preorder of the graph

	// Types, one per type of the snapshot, in the snapshot's type order.
	Types []TypeStats
	// Unreachable objects: in the snapshot but not reached from a strong
	// root (held only by weak handles, or garbage the collection had not
	// freed yet).
	UnreachableObjects int
	UnreachableBytes   uint64
	// RootCounts is the number of roots of each kind.
	RootCounts [numRootKinds]int

	paths     map[string]*PathStats
	pathOrder []string
	// held names the roots of the objects several kinds of root hold
	// ("[roots: stack, static Shop.Work.Leak]"), by object
	held map[int32]string
	// pre and end: object o's subtree of the dominator tree is the objects
	// x with pre[o] <= pre[x] < end[o]
	pre, end []int32
}

// TypeStats is what the objects of one type hold.
type TypeStats struct {
	Type    int    // index into Snapshot.Types
	Name    string //
	Count   int    // objects
	Shallow uint64 // their own bytes
	// Retained is the bytes that would be freed if every object of the
	// type were: the retained sizes of its objects that no other object of
	// the same type dominates (so nested ones are not counted twice).
	Retained uint64
}

// PathStats is what the objects reached through one retention path hold.
type PathStats struct {
	// Frames is the path from the root kind ("[static]", "[stack]", ...,
	// "[roots]" when several kinds hold it) through the types of the
	// dominating objects to the objects' type; repeated consecutive types
	// are one frame ("Node" for a linked list's nodes), and a path deeper
	// than MaxPathFrames keeps its first and last frames around "…".
	Frames  []string
	Count   int    // objects whose own type ends the path
	Shallow uint64 // their bytes
	// Retained is what the objects that start the last frame retain (the
	// first object of a run of one type: the list's head node).
	Retained uint64
}

// MaxPathFrames bounds a retention path's frames.
const MaxPathFrames = 48

// Retained returns object o's retained size: its bytes and those of every
// object it dominates.
func (a *Analysis) Retained(o int) uint64 { return a.retained[o] }

// Reachable reports whether object o is reached from a strong root.
func (a *Analysis) Reachable(o int) bool { return a.idom[o] >= 0 }

// Dominator returns object o's immediate dominator, or -1 when a root (or
// several roots) holds it directly or it is unreachable; kind is then the
// root kind when one kind holds it, RootOther with several == true when
// several kinds do.
func (a *Analysis) Dominator(o int) (d int, kind RootKind, several bool) {
	n := a.S.NumObjects()
	id := int(a.idom[o])
	switch {
	case id < 0:
		return -1, RootOther, false
	case id < n:
		return id, 0, false
	case id == int(a.superRoot()):
		return -1, RootOther, true
	case id >= n+int(numRootKinds):
		return -1, RootStatic, false
	default:
		return -1, RootKind(id - n), false
	}
}

func (a *Analysis) superRoot() int32 {
	return int32(a.S.NumObjects() + int(numRootKinds) + len(a.S.Statics))
}

// StaticField returns the static field that alone holds object o (its
// immediate dominator), or "".
func (a *Analysis) StaticField(o int) string {
	id := int(a.idom[o]) - a.S.NumObjects() - int(numRootKinds)
	if id >= 0 && id < len(a.S.Statics) {
		return a.S.Statics[id]
	}
	return ""
}

// Chain returns the objects from the outermost dominator (held by a root)
// down to o.
func (a *Analysis) Chain(o int) []int {
	var c []int
	for x := o; x >= 0; {
		c = append(c, x)
		d, _, _ := a.Dominator(x)
		x = d
	}
	slices.Reverse(c)
	return c
}

// Analyze computes the dominator tree, the retained sizes and the
// per-type and per-path figures.
func (s *Snapshot) Analyze() *Analysis {
	n := s.NumObjects()
	idom, order := s.dominators()
	a := &Analysis{S: s, idom: idom[:n:n], order: order, retained: make([]uint64, n)}
	for _, r := range s.roots {
		a.RootCounts[r.Kind]++
	}
	for o := range n {
		if idom[o] < 0 {
			a.UnreachableObjects++
			a.UnreachableBytes += s.size[o]
		}
	}
	// retained sizes: a dominator comes before what it dominates in DFS
	// preorder, so summing in reverse preorder is complete
	for i := len(order) - 1; i >= 0; i-- {
		v := order[i]
		if int(v) >= n {
			continue
		}
		a.retained[v] += s.size[v]
		if d := idom[v]; d >= 0 && int(d) < n {
			a.retained[d] += a.retained[v]
		}
	}
	a.walkTree(idom)
	return a
}

// walkTree walks the dominator tree depth first from the super-root,
// keeping the path of types, and fills Types and the paths.
func (a *Analysis) walkTree(idom []int32) {
	s := a.S
	n := s.NumObjects()
	M := len(idom)
	root := int32(M - 1)
	// children lists (CSR)
	start := make([]int32, M+1)
	for v := range M {
		if idom[v] >= 0 {
			start[idom[v]+1]++
		}
	}
	for i := 1; i <= M; i++ {
		start[i] += start[i-1]
	}
	kids := make([]int32, start[M])
	fill := append([]int32(nil), start[:M]...)
	for v := range M {
		if d := idom[v]; d >= 0 {
			kids[fill[d]] = int32(v)
			fill[d]++
		}
	}

	a.Types = make([]TypeStats, len(s.Types))
	for i, t := range s.Types {
		a.Types[i] = TypeStats{Type: i, Name: t.Name}
	}
	for o := range n {
		ts := &a.Types[s.typ[o]]
		ts.Count++
		ts.Shallow += s.size[o]
	}
	active := make([]int32, len(s.Types)) // objects of the type on the current tree path
	superRoot := int32(M - 1)
	a.held = a.heldBySeveral(idom, superRoot)
	held := a.held
	a.paths = map[string]*PathStats{}

	type frame struct {
		v       int32
		next    int32
		pushed  bool // v added a frame to names
		pushed2 bool // and another before it: its roots
	}
	var names []string // compressed path of frame names
	a.pre = make([]int32, n)
	a.end = make([]int32, n)
	var clock int32
	stack := []frame{{v: root}}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next == 0 && top.v != root {
			// entering v
			v := top.v
			var name string
			switch {
			case int(v) < n && idom[v] == superRoot:
				// held by roots of several kinds: name them, then the type
				names = append(names, held[v])
				top.pushed2 = true
				name = s.Types[s.typ[v]].Name
			case int(v) < n:
				name = s.Types[s.typ[v]].Name
			case int(v) < n+int(numRootKinds):
				name = "[" + RootKind(int(v)-n).String() + "]"
			default:
				name = s.Statics[int(v)-n-int(numRootKinds)]
			}
			if len(names) == 0 || names[len(names)-1] != name {
				names = append(names, name)
				top.pushed = true
			}
			if int(v) < n {
				a.pre[v] = clock
				clock++
				t := s.typ[v]
				if active[t] == 0 {
					a.Types[t].Retained += a.retained[v]
				}
				active[t]++
				key, frames := pathKey(names)
				p := a.paths[key]
				if p == nil {
					p = &PathStats{Frames: frames}
					a.paths[key] = p
					a.pathOrder = append(a.pathOrder, key)
				}
				p.Count++
				p.Shallow += s.size[v]
				if top.pushed {
					p.Retained += a.retained[v]
				}
			}
		}
		ch := kids[start[top.v]:start[top.v+1]]
		if int(top.next) < len(ch) {
			c := ch[top.next]
			top.next++
			stack = append(stack, frame{v: c})
			continue
		}
		// leaving v
		if top.v != root {
			if int(top.v) < n {
				active[s.typ[top.v]]--
				a.end[top.v] = clock
			}
			if top.pushed {
				names = names[:len(names)-1]
			}
			if top.pushed2 {
				names = names[:len(names)-1]
			}
		}
		stack = stack[:len(stack)-1]
	}
}

// heldBySeveral names, for each object the super-root dominates (held by
// roots of several kinds), the roots that hold it: "[roots: stack,
// static Shop.Work.Leak]".
func (a *Analysis) heldBySeveral(idom []int32, superRoot int32) map[int32]string {
	s := a.S
	labels := map[int32][]string{}
	for _, r := range s.roots {
		if !r.Kind.Strong() || idom[r.Object] != superRoot {
			continue
		}
		l := r.Kind.String()
		if r.Static > 0 {
			l = "static " + s.Statics[r.Static-1]
		}
		if !slices.Contains(labels[r.Object], l) {
			labels[r.Object] = append(labels[r.Object], l)
		}
	}
	out := make(map[int32]string, len(labels))
	for o, ls := range labels {
		slices.Sort(ls)
		out[o] = "[roots: " + strings.Join(ls, ", ") + "]"
	}
	return out
}

const ellipsis = "…"

// pathKey returns the key of a compressed path and its frames, cut to
// MaxPathFrames.
func pathKey(names []string) (string, []string) {
	frames := names
	if len(frames) > MaxPathFrames {
		head := MaxPathFrames / 3
		tail := MaxPathFrames - head - 1
		frames = append(append(append([]string(nil), names[:head]...), ellipsis), names[len(names)-tail:]...)
	} else {
		frames = append([]string(nil), frames...)
	}
	return strings.Join(frames, "\x00"), frames
}

// Paths returns the retention paths, largest shallow bytes first.
func (a *Analysis) Paths() []*PathStats {
	ps := make([]*PathStats, 0, len(a.paths))
	for _, k := range a.pathOrder {
		ps = append(ps, a.paths[k])
	}
	slices.SortStableFunc(ps, func(x, y *PathStats) int { return cmp.Compare(y.Shallow, x.Shallow) })
	return ps
}

// TypesByRetained returns the types with objects, largest retained first.
func (a *Analysis) TypesByRetained() []TypeStats {
	var ts []TypeStats
	for _, t := range a.Types {
		if t.Count > 0 {
			ts = append(ts, t)
		}
	}
	slices.SortStableFunc(ts, func(x, y TypeStats) int {
		if c := cmp.Compare(y.Retained, x.Retained); c != 0 {
			return c
		}
		return cmp.Compare(y.Shallow, x.Shallow)
	})
	return ts
}

// LargestRetainers returns up to k objects with the largest retained
// sizes that are not dominated by another of the returned ones (so a list
// and its array are not both listed), largest first.
func (a *Analysis) LargestRetainers(k int) []int {
	objs := make([]int, 0, a.S.NumObjects())
	for o := range a.S.NumObjects() {
		if a.idom[o] >= 0 {
			objs = append(objs, o)
		}
	}
	slices.SortStableFunc(objs, func(x, y int) int { return cmp.Compare(a.retained[y], a.retained[x]) })
	var out []int
	for _, o := range objs {
		if len(out) >= k {
			break
		}
		dominated := false
		for _, c := range out {
			if a.pre[c] <= a.pre[o] && a.pre[o] < a.end[c] {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, o)
		}
	}
	return out
}
