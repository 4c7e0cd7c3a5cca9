package heapsnap

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
)

// BuilderOptions configure a Builder.
type BuilderOptions struct {
	// SpillDir, when set, is where the Builder writes the objects and
	// their references once it holds more than SpillAfter objects: in a
	// temporary file there, removed by Build or Discard. A heap walk then
	// costs the Builder a write buffer, not memory per object, and Build
	// reads the file back into the snapshot's arrays (about 36 bytes per
	// object and 4 per reference at its peak, against about 56 and 12
	// without spilling).
	SpillDir string
	// SpillAfter is the number of objects kept in memory before the
	// Builder spills (default 1,000,000; only with SpillDir).
	SpillAfter int
}

// NewBuilderWith returns an empty Builder with options.
func NewBuilderWith(o BuilderOptions) *Builder {
	if o.SpillAfter <= 0 {
		o.SpillAfter = 1_000_000
	}
	b := NewBuilder()
	b.opts = o
	return b
}

// A spill is the Builder's temporary file: one record per object,
// little-endian: address (8), type index (4), size (8), number of
// references (4), the references (8 each).
type spill struct {
	f     *os.File
	w     *bufio.Writer
	n     int // objects written
	nrefs int // references written
	err   error
	hdr   [24]byte
}

func (b *Builder) startSpill() {
	f, err := os.CreateTemp(b.opts.SpillDir, "heapsnap-spill-*")
	if err != nil {
		// keep going in memory, and say so in the snapshot
		b.SetMeta("spill", fmt.Sprintf("not spilled: %v", err))
		b.opts.SpillDir = ""
		return
	}
	b.sp = &spill{f: f, w: bufio.NewWriterSize(f, 1<<20)}
	for _, o := range b.objs {
		b.sp.write(o.addr, o.typ, o.size, b.refs[o.refStart:o.refStart+o.nrefs])
	}
	b.objs, b.refs = nil, nil
}

func (sp *spill) write(addr uint64, typ int32, size uint64, refs []uint64) {
	if sp.err != nil {
		return
	}
	binary.LittleEndian.PutUint64(sp.hdr[0:], addr)
	binary.LittleEndian.PutUint32(sp.hdr[8:], uint32(typ))
	binary.LittleEndian.PutUint64(sp.hdr[12:], size)
	binary.LittleEndian.PutUint32(sp.hdr[20:], uint32(len(refs)))
	if _, err := sp.w.Write(sp.hdr[:]); err != nil {
		sp.err = err
		return
	}
	var r [8]byte
	for _, x := range refs {
		binary.LittleEndian.PutUint64(r[:], x)
		if _, err := sp.w.Write(r[:]); err != nil {
			sp.err = err
			return
		}
	}
	sp.n++
	sp.nrefs += len(refs)
}

func (sp *spill) remove() {
	sp.f.Close()
	os.Remove(sp.f.Name())
}

// Discard frees what the Builder holds, its spill file included, when it
// will not be built.
func (b *Builder) Discard() {
	if b.sp != nil {
		b.sp.remove()
	}
	*b = Builder{}
}

// readSpill reads the spill back: pass calls rec for each object in the
// order written, with its references in buf.
func (sp *spill) read(rec func(k int, addr uint64, typ int32, size uint64, refs []uint64) error) error {
	if _, err := sp.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(sp.f, 1<<20)
	var hdr [24]byte
	var refs []uint64
	var rb [8]byte
	for k := 0; k < sp.n; k++ {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return err
		}
		nr := binary.LittleEndian.Uint32(hdr[20:])
		refs = refs[:0]
		for range nr {
			if _, err := io.ReadFull(r, rb[:]); err != nil {
				return err
			}
			refs = append(refs, binary.LittleEndian.Uint64(rb[:]))
		}
		if err := rec(k, binary.LittleEndian.Uint64(hdr[0:]), int32(binary.LittleEndian.Uint32(hdr[8:])), binary.LittleEndian.Uint64(hdr[12:]), refs); err != nil {
			return err
		}
	}
	return nil
}

// byAddr sorts the objects read from a spill by address, carrying their
// other columns along.
type byAddr struct {
	addr  []uint64
	typ   []int32
	size  []uint64
	nrefs []uint32
	orig  []int32 // the record's number in the spill
}

func (x *byAddr) Len() int { return len(x.addr) }
func (x *byAddr) Less(i, j int) bool {
	if x.addr[i] != x.addr[j] {
		return x.addr[i] < x.addr[j]
	}
	return x.orig[i] < x.orig[j] // stable: the first report first
}
func (x *byAddr) Swap(i, j int) {
	x.addr[i], x.addr[j] = x.addr[j], x.addr[i]
	x.typ[i], x.typ[j] = x.typ[j], x.typ[i]
	x.size[i], x.size[j] = x.size[j], x.size[i]
	x.nrefs[i], x.nrefs[j] = x.nrefs[j], x.nrefs[i]
	x.orig[i], x.orig[j] = x.orig[j], x.orig[i]
}

// buildSpilled is Build for a Builder that spilled: the objects are read
// back, sorted by address, merged where reported twice (as Build does),
// and their references resolved in a second pass over the file.
func (b *Builder) buildSpilled() (*Snapshot, error) {
	sp := b.sp
	defer sp.remove()
	if sp.err == nil {
		sp.err = sp.w.Flush()
	}
	if sp.err != nil {
		return nil, fmt.Errorf("heapsnap: spilling: %w", sp.err)
	}
	b.SetMeta("spill", fmt.Sprintf("%d object reports and %d references written to disk during the walk (more than %d objects)", sp.n, sp.nrefs, b.opts.SpillAfter))
	n := sp.n
	x := &byAddr{addr: make([]uint64, n), typ: make([]int32, n), size: make([]uint64, n), nrefs: make([]uint32, n), orig: make([]int32, n)}
	nonNil := 0
	err := sp.read(func(k int, addr uint64, typ int32, size uint64, refs []uint64) error {
		x.addr[k], x.typ[k], x.size[k], x.orig[k] = addr, typ, size, int32(k)
		c := 0
		for _, r := range refs {
			if r != 0 {
				c++
			}
		}
		x.nrefs[k] = uint32(c)
		nonNil += c
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("heapsnap: reading the spill: %w", err)
	}
	sort.Sort(x)
	// merge duplicates: keep the report with the most references (the
	// first of equals), as Build does
	keep := 0
	for i := 0; i < n; i++ {
		if keep > 0 && x.addr[keep-1] == x.addr[i] {
			if x.typ[keep-1] != x.typ[i] || x.size[keep-1] != x.size[i] {
				return nil, fmt.Errorf("%w: %#x (types %q and %q, sizes %d and %d)", ErrDuplicate, x.addr[i],
					b.types[x.typ[keep-1]].Name, b.types[x.typ[i]].Name, x.size[keep-1], x.size[i])
			}
			if x.nrefs[i] > x.nrefs[keep-1] {
				x.nrefs[keep-1], x.orig[keep-1] = x.nrefs[i], x.orig[i]
			}
			continue
		}
		x.addr[keep], x.typ[keep], x.size[keep], x.nrefs[keep], x.orig[keep] = x.addr[i], x.typ[i], x.size[i], x.nrefs[i], x.orig[i]
		keep++
	}
	n = keep
	s := &Snapshot{Types: b.types, addr: slices.Clip(x.addr[:n]), typ: slices.Clip(x.typ[:n]), size: slices.Clip(x.size[:n]), refStart: make([]uint32, n+1), Meta: b.meta}
	// where each kept record's references go: pos[record] = its index + 1
	pos := make([]int32, sp.n)
	total := uint32(0)
	for i := 0; i < n; i++ {
		pos[x.orig[i]] = int32(i) + 1
		s.refStart[i] = total
		total += x.nrefs[i]
	}
	s.refStart[n] = total
	x = nil
	resolved := make([]int32, total)
	fill := make([]uint32, n) // references resolved so far, per object
	err = sp.read(func(k int, _ uint64, _ int32, _ uint64, refs []uint64) error {
		i := pos[k] - 1
		if i < 0 {
			return nil // the other report of a duplicate
		}
		for _, r := range refs {
			if r == 0 {
				continue
			}
			if j, ok := s.Find(r); ok {
				resolved[s.refStart[i]+fill[i]] = int32(j)
				fill[i]++
			} else {
				s.Unresolved++
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("heapsnap: reading the spill: %w", err)
	}
	pos = nil
	// close the gaps of unresolved references
	w := uint32(0)
	for i := 0; i < n; i++ {
		start := s.refStart[i]
		s.refStart[i] = w
		copy(resolved[w:], resolved[start:start+fill[i]])
		w += fill[i]
	}
	s.refStart[n] = w
	s.refs = slices.Clip(resolved[:w])
	b.resolveRootsAndStatics(s)
	*b = Builder{}
	return s, nil
}
