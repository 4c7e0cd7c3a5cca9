package instr

import (
	"encoding/binary"
	"errors"
	"unicode/utf16"
)

// The records of deferred Go hooks (gohook_deferred.c writes them in a thread's
// ring; the drain reads them there and decodes them here). Little endian,
// every record a multiple of 8 bytes, starting with one word:
//
//	bits 0-15   length of the record in bytes (strings included)
//	bits 16-17  kind: 1 enter, 2 exit
//	bit  18     a clock reading follows (GoHooks.Timestamps)
//	bits 19-22  enter: the number of arguments n (at most MaxGoArgs);
//	            exit: the words after the return value n (0, or with
//	            result members 1 + their number: their status word, then
//	            the members)
//	bit  23     0
//	bits 24-31  flags: enter: bit i, argument i is a string (it follows);
//	            exit: bit 0 an exception is leaving, bit 1 the return
//	            value is a string (it follows), bit 2 the exception's type
//	            name follows, bits 3-6 result member j is a string (it
//	            follows)
//	bits 32-63  the method's id (goTable's index), int32
//
// then, if bit 18 is set, a uint64 of CLOCK_MONOTONIC ns at the call;
// enter: n int64 arguments (0 for those that are strings); exit: int64
// return value (0 if it is a string), then n words; then the strings in
// order (arguments by index; return value, the type name, then the
// result members): int32 UTF-16
// units (-1 for null), uint32 flags (bit 0: cut short), the units, padded
// to 8 bytes. An enter without arguments or clock is 8 bytes, an exit
// without strings or clock 16: the drain's fast path.

const (
	qEnter = 1
	qExit  = 2

	qExcFlag     = 1
	qRetStrFlag  = 2
	qTypeStrFlag = 4

	qHeader = 8 // the first word
)

// qword0 is a record's first word, decoded.
type qword0 struct {
	size  int
	kind  uint8
	timed bool
	n     int
	flags uint16
	id    int32
}

func qhead(w uint64) qword0 {
	return qword0{
		size:  int(uint16(w)),
		kind:  uint8(w>>16) & 3,
		timed: w>>18&1 != 0,
		n:     int(w>>19) & 15,
		flags: uint16(uint8(w >> 24)),
		id:    int32(uint32(w >> 32)),
	}
}

// qstr is a string copied into a record.
type qstr struct {
	s     string
	null  bool
	trunc bool
}

// qrec is one decoded record.
type qrec struct {
	kind  uint8
	flags uint16
	id    int32
	time  uint64
	args  [MaxGoArgs]uint64
	nargs int
	ret   uint64
	strs  [MaxGoArgs]qstr // enter: by argument index; exit: [0] return value, [1] type name, [2+j] result member j
	units []uint16        // scratch
}

var errQRecord = errors.New("instr: malformed deferred hook record")

// decodeQ calls fn with each record of b (the same qrec, reused) and
// returns an error at the first malformed one.
func decodeQ(b []byte, fn func(r *qrec)) error {
	var r qrec
	for len(b) > 0 {
		var err error
		if b, err = r.next(b); err != nil {
			return err
		}
		fn(&r)
	}
	return nil
}

// next decodes the record at the start of b into r and returns the rest.
func (r *qrec) next(b []byte) ([]byte, error) {
	if len(b) < qHeader {
		return nil, errQRecord
	}
	w := binary.LittleEndian.Uint64(b)
	h := qhead(w)
	if h.size < qHeader || h.size%8 != 0 || h.size > len(b) || w>>23&1 != 0 {
		return nil, errQRecord
	}
	rec := b[:h.size]
	b = b[h.size:]
	// Only what this record sets is reset (strs: the slots it has).
	r.kind, r.flags, r.id, r.time = h.kind, h.flags, h.id, 0
	r.nargs, r.ret = 0, 0
	p := rec[qHeader:]
	if h.timed {
		if len(p) < 8 {
			return nil, errQRecord
		}
		r.time = binary.LittleEndian.Uint64(p)
		p = p[8:]
	}
	var slots [MaxGoArgs]int
	strs := slots[:0] // which strs slots follow, in order
	switch r.kind {
	case qEnter:
		r.nargs = h.n
		if r.nargs > MaxGoArgs || len(p) < 8*r.nargs || r.flags>>r.nargs != 0 {
			return nil, errQRecord
		}
		for i := 0; i < r.nargs; i++ {
			r.args[i] = binary.LittleEndian.Uint64(p[8*i:])
			if r.flags&(1<<i) != 0 {
				strs = append(strs, i)
			}
		}
		p = p[8*r.nargs:]
	case qExit:
		r.nargs = h.n
		if h.n > 1+MaxGoResultMembers || len(p) < 8+8*h.n || r.flags&^0x7f != 0 || r.flags>>3 >= 1<<max(h.n-1, 0) {
			return nil, errQRecord
		}
		r.ret = binary.LittleEndian.Uint64(p)
		for i := 0; i < h.n; i++ {
			r.args[i] = binary.LittleEndian.Uint64(p[8+8*i:])
		}
		p = p[8+8*h.n:]
		if r.flags&qRetStrFlag != 0 {
			strs = append(strs, 0)
		}
		if r.flags&qTypeStrFlag != 0 {
			strs = append(strs, 1)
		}
		for j := 0; j < MaxGoResultMembers; j++ {
			if r.flags&(8<<j) != 0 {
				strs = append(strs, 2+j)
			}
		}
	default:
		return nil, errQRecord
	}
	for _, i := range strs {
		if len(p) < 8 {
			return nil, errQRecord
		}
		cnt := int32(binary.LittleEndian.Uint32(p))
		fl := binary.LittleEndian.Uint32(p[4:])
		p = p[8:]
		if cnt < 0 {
			if cnt != -1 {
				return nil, errQRecord
			}
			r.strs[i] = qstr{null: true}
			continue
		}
		size := (2*int(cnt) + 7) &^ 7
		if len(p) < size {
			return nil, errQRecord
		}
		r.units = r.units[:0]
		for j := 0; j < int(cnt); j++ {
			r.units = append(r.units, binary.LittleEndian.Uint16(p[2*j:]))
		}
		r.strs[i] = qstr{s: string(utf16.Decode(r.units)), trunc: fl&1 != 0}
		p = p[size:]
	}
	if len(p) != 0 {
		return nil, errQRecord
	}
	return b, nil
}
