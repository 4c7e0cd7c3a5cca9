package instr

import (
	"encoding/binary"
	"errors"
	"unicode/utf16"
)

// The records of deferred Go hooks (gohook_q.c writes them in a thread's
// ring; the drain copies runs of whole records out and decodes them here).
// Little endian, every record a multiple of 8 bytes:
//
//	0  uint32 length of the record in bytes (header and strings included)
//	4  uint8  kind: 1 enter, 2 exit
//	5  uint8  enter: the number of arguments n (at most MaxGoArgs)
//	6  uint16 flags: enter: bit i, argument i is a string (it follows);
//	          exit: bit 0 an exception is leaving, bit 1 the return value
//	          is a string (it follows), bit 2 the exception's type name
//	          follows
//	8  int32  the method's id (goTable's index)
//	12 uint32 0
//	16 uint64 CLOCK_MONOTONIC ns at the call (GoHooks.Timestamps), else 0
//	24 enter: n int64 arguments (0 for those that are strings);
//	   exit: int64 return value (0 if it is a string)
//	then the strings in order (arguments by index; return value, then the
//	type name): int32 UTF-16 units (-1 for null), uint32 flags (bit 0: cut
//	short), the units, padded to 8 bytes.

const (
	qEnter = 1
	qExit  = 2

	qExcFlag     = 1
	qRetStrFlag  = 2
	qTypeStrFlag = 4

	qHeader = 24
)

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
	strs  [MaxGoArgs]qstr // enter: by argument index; exit: [0] return value, [1] type name
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
	n := binary.LittleEndian.Uint32(b)
	if n < qHeader || n%8 != 0 || uint64(n) > uint64(len(b)) {
		return nil, errQRecord
	}
	rec := b[:n]
	b = b[n:]
	// Only what this record sets is reset (strs: the slots it has).
	r.kind, r.flags, r.id, r.time = rec[4], binary.LittleEndian.Uint16(rec[6:]), int32(binary.LittleEndian.Uint32(rec[8:])),
		binary.LittleEndian.Uint64(rec[16:])
	r.nargs, r.ret = 0, 0
	p := rec[qHeader:]
	var slots [MaxGoArgs]int
	strs := slots[:0] // which strs slots follow, in order
	switch r.kind {
	case qEnter:
		r.nargs = int(rec[5])
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
		if rec[5] != 0 || len(p) < 8 || r.flags&^7 != 0 {
			return nil, errQRecord
		}
		r.ret = binary.LittleEndian.Uint64(p)
		p = p[8:]
		if r.flags&qRetStrFlag != 0 {
			strs = append(strs, 0)
		}
		if r.flags&qTypeStrFlag != 0 {
			strs = append(strs, 1)
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
