package heapsnap

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// RootKind says what holds a root reference, as the runtime reports it
// (COR_PRF_GC_ROOT_KIND, with the finalizer queue and statics named apart).
type RootKind uint8

// Root kinds.
const (
	RootOther     RootKind = iota // a root of a kind the runtime did not name
	RootStack                     // a local or argument of a running method
	RootHandle                    // a GC handle (strong, pinned, ref-counted, dependent)
	RootFinalizer                 // the finalizer queue (objects awaiting finalization)
	RootStatic                    // a static field (reached through its handle or the statics' storage)
	RootPinning                   // a pinning handle or a pinned local
	RootWeak                      // a weak handle (does not keep the object alive)
	RootFrozen                    // the non-GC (frozen) heap: string literals, RuntimeType objects (.NET 8+); never freed
	numRootKinds
)

var rootKindNames = [...]string{"other", "stack", "handle", "finalizer", "static", "pinning", "weak", "frozen"}

func (k RootKind) String() string {
	if int(k) < len(rootKindNames) {
		return rootKindNames[k]
	}
	return fmt.Sprintf("RootKind(%d)", uint8(k))
}

// Strong reports whether a root of this kind keeps its object alive.
func (k RootKind) Strong() bool { return k != RootWeak }

// Type is a type of the snapshot.
type Type struct {
	Name string // as the runtime names it, e.g. System.Collections.Generic.Dictionary`2+Entry[System.Int32,Shop.X][]
}

// Root is a root reference.
type Root struct {
	Object int32 // the object's index
	Kind   RootKind
	// Static is 1 + the index into Snapshot.Statics of the static field
	// holding the object (Kind is RootStatic), 0 when the root has no name.
	Static int32
}

// Snapshot is a heap snapshot: objects are numbered 0..NumObjects-1 in
// address order.
type Snapshot struct {
	Types []Type

	addr     []uint64
	typ      []int32
	size     []uint64
	refStart []uint32 // refs of object i: refs[refStart[i]:refStart[i+1]]
	refs     []int32
	roots    []Root
	// Statics names the static fields of the roots that have one
	// ("Shop.Work.Leak").
	Statics []string

	// Unresolved counts references and roots to addresses that are not
	// objects of the snapshot (the runtime reported a reference to
	// something it did not report as live); they are dropped.
	Unresolved int
	// Meta is free-form information about where the snapshot comes from
	// (process, runtime, time, how it was taken), written in the report.
	Meta map[string]string
}

// NumObjects is the number of objects.
func (s *Snapshot) NumObjects() int { return len(s.addr) }

// Object returns object i's address, type index and size in bytes.
func (s *Snapshot) Object(i int) (addr uint64, typ int, size uint64) {
	return s.addr[i], int(s.typ[i]), s.size[i]
}

// Refs returns the objects object i references (a slice of the snapshot:
// do not modify).
func (s *Snapshot) Refs(i int) []int32 { return s.refs[s.refStart[i]:s.refStart[i+1]] }

// Roots returns the roots.
func (s *Snapshot) Roots() []Root { return s.roots }

// TotalBytes is the sum of the objects' sizes.
func (s *Snapshot) TotalBytes() uint64 {
	var n uint64
	for _, z := range s.size {
		n += z
	}
	return n
}

// Find returns the index of the object at addr.
func (s *Snapshot) Find(addr uint64) (int, bool) {
	return slices.BinarySearch(s.addr, addr)
}

// Builder builds a Snapshot from what a heap walk reports, in any order:
// types, objects, each object's references and the roots, by address.
// References are resolved to objects by Build. Not safe for concurrent use.
type Builder struct {
	types   []Type
	typeIdx map[uint64]int32
	objs    []bObj
	refs    []uint64 // all references, grouped by object in AddRefs order
	roots   []bRoot
	statics []bStatic
	meta    map[string]string
	opts    BuilderOptions
	sp      *spill // the spill file, once spilling
}

type bStatic struct {
	target, slot uint64
	name         string
}

type bObj struct {
	addr     uint64
	typ      int32
	size     uint64
	refStart uint32 // into Builder.refs
	nrefs    uint32
}

type bRoot struct {
	addr uint64
	kind RootKind
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder { return &Builder{typeIdx: map[uint64]int32{}} }

// Type declares type id (the runtime's ClassID, or any number the caller
// uses consistently) with its name. A type used by AddObject and never
// declared is named "<unknown type 0x...>".
func (b *Builder) Type(id uint64, name string) {
	if i, ok := b.typeIdx[id]; ok {
		b.types[i].Name = name
		return
	}
	b.typeIdx[id] = int32(len(b.types))
	b.types = append(b.types, Type{Name: name})
}

// HasType reports whether type id was declared.
func (b *Builder) HasType(id uint64) bool {
	_, ok := b.typeIdx[id]
	return ok
}

// Object adds a live object at addr of type id and size bytes, with the
// addresses it references (copied; null references may be included and are
// skipped).
func (b *Builder) Object(addr, typeID, size uint64, refs []uint64) {
	ti, ok := b.typeIdx[typeID]
	if !ok {
		b.Type(typeID, fmt.Sprintf("<unknown type %#x>", typeID))
		ti = b.typeIdx[typeID]
	}
	if b.sp != nil {
		b.sp.write(addr, ti, size, refs)
		return
	}
	start := len(b.refs)
	for _, r := range refs {
		if r != 0 {
			b.refs = append(b.refs, r)
		}
	}
	b.objs = append(b.objs, bObj{addr: addr, typ: ti, size: size, refStart: uint32(start), nrefs: uint32(len(b.refs) - start)})
	if b.opts.SpillDir != "" && len(b.objs) > b.opts.SpillAfter {
		b.startSpill()
	}
}

// Root adds a root reference to the object at addr.
func (b *Builder) Root(addr uint64, kind RootKind) {
	if addr != 0 {
		b.roots = append(b.roots, bRoot{addr, kind})
	}
}

// Static records that the static field name ("Shop.Work.Leak"), whose
// storage is at address slot, holds the object at target. The runtime
// keeps static fields in arrays of its own held by handles; Build takes
// the reference out of the object that contains slot, when one does, and
// makes the field a root of kind RootStatic of its own, so that retention
// paths start at the field, not at the runtime's array.
func (b *Builder) Static(target, slot uint64, name string) {
	if target != 0 {
		b.statics = append(b.statics, bStatic{target, slot, name})
	}
}

// SetMeta records a key/value pair of the snapshot's Meta.
func (b *Builder) SetMeta(k, v string) {
	if b.meta == nil {
		b.meta = map[string]string{}
	}
	b.meta[k] = v
}

// ErrDuplicate is returned by Build when two objects of different types or
// sizes have one address.
var ErrDuplicate = errors.New("heapsnap: two objects at one address")

// Build resolves the references and returns the snapshot. The Builder must
// not be used afterwards.
func (b *Builder) Build() (*Snapshot, error) {
	if b.sp != nil {
		return b.buildSpilled()
	}
	slices.SortStableFunc(b.objs, func(x, y bObj) int { return cmp.Compare(x.addr, y.addr) })
	// An object reported twice (the heap walk and the non-GC heap's
	// enumeration both list some frozen objects) is one object if type
	// and size agree: keep the report with references.
	objs := b.objs[:0]
	for _, o := range b.objs {
		if k := len(objs) - 1; k >= 0 && objs[k].addr == o.addr {
			if objs[k].typ != o.typ || objs[k].size != o.size {
				return nil, fmt.Errorf("%w: %#x (types %q and %q, sizes %d and %d)", ErrDuplicate, o.addr,
					b.types[objs[k].typ].Name, b.types[o.typ].Name, objs[k].size, o.size)
			}
			if o.nrefs > objs[k].nrefs {
				objs[k] = o
			}
			continue
		}
		objs = append(objs, o)
	}
	b.objs = objs
	n := len(b.objs)
	s := &Snapshot{
		Types:    b.types,
		addr:     make([]uint64, n),
		typ:      make([]int32, n),
		size:     make([]uint64, n),
		refStart: make([]uint32, n+1),
		Meta:     b.meta,
	}
	for i, o := range b.objs {
		s.addr[i], s.typ[i], s.size[i] = o.addr, o.typ, o.size
	}
	s.refs = make([]int32, 0, len(b.refs))
	for i, o := range b.objs {
		s.refStart[i] = uint32(len(s.refs))
		for _, r := range b.refs[o.refStart : o.refStart+o.nrefs] {
			if j, ok := s.Find(r); ok {
				s.refs = append(s.refs, int32(j))
			} else {
				s.Unresolved++
			}
		}
	}
	s.refStart[n] = uint32(len(s.refs))
	b.resolveRootsAndStatics(s)
	*b = Builder{}
	return s, nil
}

// resolveRootsAndStatics adds the roots and the static fields to s, whose
// objects and references are resolved.
func (b *Builder) resolveRootsAndStatics(s *Snapshot) {
	for _, r := range b.roots {
		if j, ok := s.Find(r.addr); ok {
			s.roots = append(s.roots, Root{Object: int32(j), Kind: r.kind})
		} else {
			s.Unresolved++
		}
	}
	for _, st := range b.statics {
		j, ok := s.Find(st.target)
		if !ok {
			s.Unresolved++
			continue
		}
		// the object whose storage holds the slot: the last one at or
		// below it, if the slot is inside it
		if h, found := slices.BinarySearch(s.addr, st.slot); found || h > 0 {
			if !found {
				h--
			}
			if st.slot < s.addr[h]+s.size[h] {
				refs := s.refs[s.refStart[h]:s.refStart[h+1]]
				if k := slices.Index(refs, int32(j)); k >= 0 {
					// drop it by pointing it at the holder itself: a
					// self-reference changes no dominator
					refs[k] = int32(h)
				}
			}
		}
		s.Statics = append(s.Statics, st.name)
		s.roots = append(s.roots, Root{Object: int32(j), Kind: RootStatic, Static: int32(len(s.Statics))})
	}
}
