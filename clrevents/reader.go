package clrevents

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unicode/utf16"
)

// ErrShort is wrapped by the errors of a payload or metadata blob that ends
// before the fields it must hold.
var ErrShort = errors.New("clrevents: data too short")

// reader reads little-endian fields; the first short read sets err, and
// every read after it returns zero.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) take(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b)-r.off < n {
		r.err = fmt.Errorf("%w: %s needs %d bytes at offset %d of %d", ErrShort, what, n, r.off, len(r.b))
		return nil
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p
}

func (r *reader) left() int { return len(r.b) - r.off }

func (r *reader) u8(what string) uint8 {
	if p := r.take(1, what); p != nil {
		return p[0]
	}
	return 0
}

func (r *reader) u16(what string) uint16 {
	if p := r.take(2, what); p != nil {
		return binary.LittleEndian.Uint16(p)
	}
	return 0
}

func (r *reader) u32(what string) uint32 {
	if p := r.take(4, what); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (r *reader) u64(what string) uint64 {
	if p := r.take(8, what); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

func (r *reader) f32(what string) float32 { return math.Float32frombits(r.u32(what)) }
func (r *reader) f64(what string) float64 { return math.Float64frombits(r.u64(what)) }

// str reads a NUL-terminated UTF-16 string.
func (r *reader) str(what string) string {
	if r.err != nil {
		return ""
	}
	var units []uint16
	for i := r.off; i+1 < len(r.b); i += 2 {
		u := binary.LittleEndian.Uint16(r.b[i:])
		if u == 0 {
			r.off = i + 2
			return string(utf16.Decode(units))
		}
		units = append(units, u)
	}
	r.err = fmt.Errorf("%w: %s: no NUL-terminated UTF-16 string at offset %d of %d", ErrShort, what, r.off, len(r.b))
	return ""
}
