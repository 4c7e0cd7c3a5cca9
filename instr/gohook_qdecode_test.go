package instr

import (
	"encoding/binary"
	"testing"
	"unicode/utf16"
)

// qbuild writes records as gohook_deferred.c does (the test's own encoder).
type qbuild struct{ b []byte }

func (q *qbuild) hdr(kind uint8, n uint8, flags uint16, id int32, t uint64) int {
	at := len(q.b)
	w := uint64(kind)<<16 | uint64(n)<<19 | uint64(flags)<<24 | uint64(uint32(id))<<32
	if t != 0 {
		w |= 1 << 18
	}
	q.u64(w)
	if t != 0 {
		q.u64(t)
	}
	return at
}

func (q *qbuild) u64(v uint64) { q.b = binary.LittleEndian.AppendUint64(q.b, v) }

func (q *qbuild) str(s string, null, trunc bool) {
	if null {
		q.b = binary.LittleEndian.AppendUint32(q.b, 0xffffffff)
		q.b = binary.LittleEndian.AppendUint32(q.b, 0)
		return
	}
	u := utf16.Encode([]rune(s))
	q.b = binary.LittleEndian.AppendUint32(q.b, uint32(len(u)))
	var fl uint32
	if trunc {
		fl = 1
	}
	q.b = binary.LittleEndian.AppendUint32(q.b, fl)
	for _, c := range u {
		q.b = binary.LittleEndian.AppendUint16(q.b, c)
	}
	for len(q.b)%8 != 0 {
		q.b = append(q.b, 0)
	}
}

func (q *qbuild) end(at int) { binary.LittleEndian.PutUint16(q.b[at:], uint16(len(q.b)-at)) }

func TestDecodeQ(t *testing.T) {
	var q qbuild
	at := q.hdr(qEnter, 3, 0b110, 7, 12345)
	q.u64(uint64(1<<63 | 5))
	q.u64(0)
	q.u64(0)
	q.str("héllo ☃", false, false)
	q.str("", true, false)
	q.end(at)
	at = q.hdr(qExit, 0, qExcFlag|qRetStrFlag|qTypeStrFlag, 7, 12400)
	q.u64(0)
	q.str("abc", false, true)
	q.str("System.Exception", false, false)
	q.end(at)
	at = q.hdr(qExit, 0, 0, 9, 0)
	q.u64(42)
	q.end(at)
	var got []qrec
	if err := decodeQ(q.b, func(r *qrec) { got = append(got, *r) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d records, want 3", len(got))
	}
	e := got[0]
	if e.kind != qEnter || e.id != 7 || e.time != 12345 || e.nargs != 3 || e.args[0] != 1<<63|5 ||
		e.strs[1] != (qstr{s: "héllo ☃"}) || e.strs[2] != (qstr{null: true}) {
		t.Errorf("enter: %+v", e)
	}
	x := got[1]
	if x.kind != qExit || x.flags != 7 || x.time != 12400 || x.strs[0] != (qstr{s: "abc", trunc: true}) || x.strs[1].s != "System.Exception" {
		t.Errorf("exit: %+v", x)
	}
	if got[2].ret != 42 || got[2].id != 9 {
		t.Errorf("exit: %+v", got[2])
	}
	// A run cut inside a record is malformed (and what came before is
	// delivered), never a panic; cut at a boundary it is not.
	bounds := map[int]int{0: 0}
	for i, off := 0, 0; off < len(q.b); i++ {
		off += int(binary.LittleEndian.Uint16(q.b[off:]))
		bounds[off] = i + 1
	}
	for i := 0; i <= len(q.b); i++ {
		n := 0
		err := decodeQ(q.b[:i], func(*qrec) { n++ })
		if k, ok := bounds[i]; ok {
			if err != nil || n != k {
				t.Errorf("cut at %d (a boundary): %d records, %v; want %d", i, n, err, k)
			}
		} else if err == nil {
			t.Errorf("cut at %d: no error", i)
		}
	}
	for _, bad := range [][]byte{
		make([]byte, 4),           // short
		make([]byte, 24),          // length 0
		{16, 0, 1, 0, 0, 0, 0, 0}, // longer than the run
	} {
		if err := decodeQ(bad, func(*qrec) {}); err == nil {
			t.Errorf("%x: no error", bad)
		}
	}
}

func FuzzDecodeQ(f *testing.F) {
	var q qbuild
	at := q.hdr(qEnter, 2, 1, 3, 1)
	q.u64(0)
	q.u64(9)
	q.str("x", false, false)
	q.end(at)
	f.Add(q.b)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		total := 0
		_ = decodeQ(b, func(r *qrec) {
			if r.nargs > MaxGoArgs || (r.kind != qEnter && r.kind != qExit) {
				t.Fatalf("bad record accepted: %+v", r)
			}
			total++
		})
		if total > len(b)/qHeader {
			t.Fatalf("%d records from %d bytes", total, len(b))
		}
	})
}
