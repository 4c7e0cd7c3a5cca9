package clrevents

import (
	"encoding/binary"
	"math"
	"time"
	"unicode/utf16"

	"github.com/google/uuid"
)

// Payload builds an event payload field by field, laid out as EventPipe
// reads it (what profiler.Info.EventPipeWriteEvent sends and DecodeFields
// reads back). The zero value is an empty payload.
type Payload struct{ b []byte }

// Bytes returns the payload built so far.
func (p *Payload) Bytes() []byte { return p.b }

// Bool appends a Boolean (4 bytes).
func (p *Payload) Bool(v bool) *Payload {
	var n uint32
	if v {
		n = 1
	}
	return p.UInt32(n)
}

// Char appends a Char (one UTF-16 code unit).
func (p *Payload) Char(v uint16) *Payload { return p.UInt16(v) }

// SByte appends an SByte.
func (p *Payload) SByte(v int8) *Payload { p.b = append(p.b, byte(v)); return p }

// Byte appends a Byte.
func (p *Payload) Byte(v uint8) *Payload { p.b = append(p.b, v); return p }

// Int16 appends an Int16.
func (p *Payload) Int16(v int16) *Payload { return p.UInt16(uint16(v)) }

// UInt16 appends a UInt16 (also an array's length).
func (p *Payload) UInt16(v uint16) *Payload { p.b = binary.LittleEndian.AppendUint16(p.b, v); return p }

// Int32 appends an Int32.
func (p *Payload) Int32(v int32) *Payload { return p.UInt32(uint32(v)) }

// UInt32 appends a UInt32.
func (p *Payload) UInt32(v uint32) *Payload { p.b = binary.LittleEndian.AppendUint32(p.b, v); return p }

// Int64 appends an Int64.
func (p *Payload) Int64(v int64) *Payload { return p.UInt64(uint64(v)) }

// UInt64 appends a UInt64.
func (p *Payload) UInt64(v uint64) *Payload { p.b = binary.LittleEndian.AppendUint64(p.b, v); return p }

// Single appends a Single.
func (p *Payload) Single(v float32) *Payload { return p.UInt32(math.Float32bits(v)) }

// Double appends a Double.
func (p *Payload) Double(v float64) *Payload { return p.UInt64(math.Float64bits(v)) }

// GUID appends a Guid in the Windows layout.
func (p *Payload) GUID(u uuid.UUID) *Payload {
	p.b = binary.LittleEndian.AppendUint32(p.b, binary.BigEndian.Uint32(u[0:]))
	p.b = binary.LittleEndian.AppendUint16(p.b, binary.BigEndian.Uint16(u[4:]))
	p.b = binary.LittleEndian.AppendUint16(p.b, binary.BigEndian.Uint16(u[6:]))
	p.b = append(p.b, u[8:]...)
	return p
}

// String appends a String (UTF-16, NUL-terminated).
func (p *Payload) String(s string) *Payload {
	for _, u := range utf16.Encode([]rune(s)) {
		p.b = binary.LittleEndian.AppendUint16(p.b, u)
	}
	p.b = append(p.b, 0, 0)
	return p
}

// DateTime appends a DateTime (a FILETIME; times before 1601 read as 1601).
func (p *Payload) DateTime(t time.Time) *Payload {
	d := t.Unix() - fileTimeEpoch
	if d < 0 {
		return p.UInt64(0)
	}
	return p.UInt64(uint64(d)*1e7 + uint64(t.Nanosecond()/100))
}
