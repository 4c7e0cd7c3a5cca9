package clrevents

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// TypeCode is the type of a field in EventPipe metadata (the values of
// COR_PRF_EVENTPIPE_PARAM_TYPE and of .NET's TypeCode).
type TypeCode uint32

// The type codes EventPipe metadata uses.
const (
	TypeObject   TypeCode = 1
	TypeBoolean  TypeCode = 3 // 4 bytes (a Win32 BOOL)
	TypeChar     TypeCode = 4 // one UTF-16 code unit
	TypeSByte    TypeCode = 5
	TypeByte     TypeCode = 6
	TypeInt16    TypeCode = 7
	TypeUInt16   TypeCode = 8
	TypeInt32    TypeCode = 9
	TypeUInt32   TypeCode = 10
	TypeInt64    TypeCode = 11
	TypeUInt64   TypeCode = 12
	TypeSingle   TypeCode = 13
	TypeDouble   TypeCode = 14
	TypeDecimal  TypeCode = 15
	TypeDateTime TypeCode = 16 // a FILETIME: 100 ns units since 1601-01-01 UTC
	TypeGUID     TypeCode = 17
	TypeString   TypeCode = 18 // NUL-terminated UTF-16
	TypeArray    TypeCode = 19 // a UInt16 count, then the elements
)

var typeNames = map[TypeCode]string{
	TypeObject: "Object", TypeBoolean: "Boolean", TypeChar: "Char", TypeSByte: "SByte", TypeByte: "Byte",
	TypeInt16: "Int16", TypeUInt16: "UInt16", TypeInt32: "Int32", TypeUInt32: "UInt32", TypeInt64: "Int64",
	TypeUInt64: "UInt64", TypeSingle: "Single", TypeDouble: "Double", TypeDecimal: "Decimal",
	TypeDateTime: "DateTime", TypeGUID: "Guid", TypeString: "String", TypeArray: "Array",
}

// String returns the type's name ("UInt32", "String", ...), or
// "TypeCode(n)" for a code this package does not know.
func (t TypeCode) String() string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("TypeCode(%d)", uint32(t))
}

// Field describes one field of an event's payload.
type Field struct {
	// Name is the field's name as the event's manifest spells it.
	Name string
	// Type is how the field is encoded.
	Type TypeCode
	// Elem is the element type of an array (Type == TypeArray).
	Elem *Field
	// Fields are the fields of an object (Type == TypeObject).
	Fields []Field
}

// Metadata is what EventPipe says of an event: its identity and the layout
// of its payload.
type Metadata struct {
	// ID is the event's ID within its provider.
	ID uint32
	// Name is the event's name; empty for most of the runtime's own
	// events (their IDs name them: IDGCStart, ...).
	Name string
	// Keywords are the keyword bits that enable the event.
	Keywords uint64
	// Version is the event's version (its payload layout).
	Version uint32
	// Level is the event's level (LevelCritical .. LevelVerbose).
	Level uint32
	// Opcode is the event's opcode (start, stop, info, ...).
	Opcode uint8
	// Params are the fields of the payload in order; empty when the
	// metadata does not describe them (the runtime's own events).
	Params []Field
}

// maxNesting bounds objects in objects and arrays of arrays.
const maxNesting = 16

// ParseMetadata parses an EventPipe event metadata blob (the metadataBlob
// of EventPipeEventDelivered): the event's ID, name, keywords, version and
// level, its parameters (the first format, and the V2 parameters with
// arrays that follow in a tagged section), and its opcode (a V2 tag). An
// empty blob is an error.
func ParseMetadata(b []byte) (*Metadata, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: empty metadata", ErrShort)
	}
	r := &reader{b: b}
	m := &Metadata{}
	m.ID = r.u32("event id")
	m.Name = r.str("event name")
	m.Keywords = r.u64("keywords")
	m.Version = r.u32("version")
	m.Level = r.u32("level")
	if r.err == nil && r.left() > 0 {
		// Metadata without a parameter count is the empty layout.
		m.Params = parseFields(r, false, 0)
	}
	for r.err == nil && r.left() > 0 {
		n := int(r.u32("tag length"))
		tag := r.u8("tag")
		if r.err != nil {
			break
		}
		if n < 0 || n > r.left() {
			return nil, fmt.Errorf("%w: metadata tag %d of %d bytes at offset %d of %d", ErrShort, tag, n, r.off, len(b))
		}
		sub := &reader{b: r.b[r.off : r.off+n]}
		switch tag {
		case 1: // opcode
			m.Opcode = sub.u8("opcode")
		case 2: // V2 parameters
			m.Params = append(m.Params, parseFields(sub, true, 0)...)
		}
		if sub.err != nil {
			return nil, fmt.Errorf("metadata tag %d: %w", tag, sub.err)
		}
		r.off += n
	}
	if r.err != nil {
		return nil, r.err
	}
	return m, nil
}

func parseFields(r *reader, v2 bool, depth int) []Field {
	n := r.u32("field count")
	if r.err != nil {
		return nil
	}
	if depth > maxNesting {
		r.err = fmt.Errorf("clrevents: metadata nests deeper than %d", maxNesting)
		return nil
	}
	// Every field takes at least 6 bytes (a type code and a NUL).
	if int64(n)*6 > int64(r.left()) {
		r.err = fmt.Errorf("%w: %d fields in %d bytes", ErrShort, n, r.left())
		return nil
	}
	out := make([]Field, 0, n)
	for i := uint32(0); i < n && r.err == nil; i++ {
		var f Field
		if v2 {
			size := r.u32("field size")
			start := r.off
			f.Name = r.str("field name")
			parseType(r, &f, v2, depth)
			if r.err == nil && size >= 4 && r.off-start != int(size)-4 {
				r.err = fmt.Errorf("clrevents: metadata field %q: size says %d bytes, read %d", f.Name, size-4, r.off-start)
			}
		} else {
			parseType(r, &f, v2, depth)
			f.Name = r.str("field name")
		}
		out = append(out, f)
	}
	return out
}

func parseType(r *reader, f *Field, v2 bool, depth int) {
	f.Type = TypeCode(r.u32("type code"))
	if r.err != nil {
		return
	}
	switch f.Type {
	case TypeArray:
		if !v2 {
			r.err = fmt.Errorf("clrevents: an array in version 1 metadata")
			return
		}
		if depth > maxNesting {
			r.err = fmt.Errorf("clrevents: metadata nests deeper than %d", maxNesting)
			return
		}
		f.Elem = &Field{}
		parseType(r, f.Elem, v2, depth+1)
	case TypeObject:
		f.Fields = parseFields(r, v2, depth+1)
	}
}

// Value is one decoded field: Name and Value, whose Go type follows the
// field's type: Object []Value, Boolean bool, Char rune, SByte int8, Byte
// uint8, Int16 int16, UInt16 uint16, Int32 int32, UInt32 uint32, Int64
// int64, UInt64 uint64, Single float32, Double float64, Decimal [16]byte,
// DateTime time.Time (UTC), Guid uuid.UUID, String string, Array []any.
type Value struct {
	Name  string
	Value any
}

// DecodeFields reads a payload laid out as params describe (from
// ParseMetadata). Bytes past the last field are an error: a payload read
// with its own metadata holds exactly its fields.
func DecodeFields(params []Field, data []byte) ([]Value, error) {
	r := &reader{b: data}
	out := decodeFields(r, params, 0)
	if r.err != nil {
		return nil, r.err
	}
	if r.left() != 0 {
		return out, fmt.Errorf("clrevents: %d bytes after the last field", r.left())
	}
	return out, nil
}

func decodeFields(r *reader, params []Field, depth int) []Value {
	out := make([]Value, 0, len(params))
	for i := range params {
		v := decodeValue(r, &params[i], depth)
		if r.err != nil {
			return nil
		}
		out = append(out, Value{Name: params[i].Name, Value: v})
	}
	return out
}

// fileTimeEpoch is 1601-01-01 in Unix seconds.
const fileTimeEpoch = -11644473600

func decodeValue(r *reader, f *Field, depth int) any {
	if depth > maxNesting {
		r.err = fmt.Errorf("clrevents: payload nests deeper than %d", maxNesting)
		return nil
	}
	w := f.Name
	switch f.Type {
	case TypeObject:
		return decodeFields(r, f.Fields, depth+1)
	case TypeBoolean:
		return r.u32(w) != 0
	case TypeChar:
		return rune(r.u16(w))
	case TypeSByte:
		return int8(r.u8(w))
	case TypeByte:
		return r.u8(w)
	case TypeInt16:
		return int16(r.u16(w))
	case TypeUInt16:
		return r.u16(w)
	case TypeInt32:
		return int32(r.u32(w))
	case TypeUInt32:
		return r.u32(w)
	case TypeInt64:
		return int64(r.u64(w))
	case TypeUInt64:
		return r.u64(w)
	case TypeSingle:
		return r.f32(w)
	case TypeDouble:
		return r.f64(w)
	case TypeDecimal:
		var d [16]byte
		copy(d[:], r.take(16, w))
		return d
	case TypeDateTime:
		ft := r.u64(w)
		return time.Unix(fileTimeEpoch+int64(ft/1e7), int64(ft%1e7)*100).UTC()
	case TypeGUID:
		return guidAt(r.take(16, w))
	case TypeString:
		return r.str(w)
	case TypeArray:
		n := int(r.u16(w + " length"))
		if f.Elem == nil {
			r.err = fmt.Errorf("clrevents: array %q without an element type", w)
			return nil
		}
		out := make([]any, 0, min(n, r.left()+1))
		for i := 0; i < n && r.err == nil; i++ {
			out = append(out, decodeValue(r, f.Elem, depth+1))
		}
		return out
	default:
		r.err = fmt.Errorf("clrevents: field %q has unknown type code %d", w, uint32(f.Type))
		return nil
	}
}

// guidAt reads a GUID as Windows lays it out (Data1, Data2, Data3 little
// endian, then 8 bytes).
func guidAt(p []byte) uuid.UUID {
	var u uuid.UUID
	if len(p) < 16 {
		return u
	}
	binary.BigEndian.PutUint32(u[0:], binary.LittleEndian.Uint32(p[0:]))
	binary.BigEndian.PutUint16(u[4:], binary.LittleEndian.Uint16(p[4:]))
	binary.BigEndian.PutUint16(u[6:], binary.LittleEndian.Uint16(p[6:]))
	copy(u[8:], p[8:16])
	return u
}
