package clrevents

import (
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"
)

// metaBuilder writes metadata blobs as EventPipe lays them out, for tests.
type metaBuilder struct{ p Payload }

func (m *metaBuilder) header(id uint32, name string, kw uint64, version, level uint32) *metaBuilder {
	m.p.UInt32(id).String(name).UInt64(kw).UInt32(version).UInt32(level)
	return m
}

// v1Fields writes a parameter count and each (type, name) pair.
func (m *metaBuilder) v1Fields(fs ...Field) *metaBuilder {
	m.p.UInt32(uint32(len(fs)))
	for _, f := range fs {
		m.p.UInt32(uint32(f.Type))
		if f.Type == TypeObject {
			sub := &metaBuilder{}
			sub.v1Fields(f.Fields...)
			m.p.b = append(m.p.b, sub.p.b...)
		}
		m.p.String(f.Name)
	}
	return m
}

func v2Type(p *Payload, f *Field) {
	p.UInt32(uint32(f.Type))
	switch f.Type {
	case TypeArray:
		v2Type(p, f.Elem)
	case TypeObject:
		p.b = append(p.b, v2Fields(f.Fields)...)
	}
}

func v2Fields(fs []Field) []byte {
	var p Payload
	p.UInt32(uint32(len(fs)))
	for i := range fs {
		var body Payload
		body.String(fs[i].Name)
		v2Type(&body, &fs[i])
		p.UInt32(uint32(len(body.b) + 4))
		p.b = append(p.b, body.b...)
	}
	return p.b
}

func (m *metaBuilder) tag(tag byte, body []byte) *metaBuilder {
	m.p.UInt32(uint32(len(body))).Byte(tag)
	m.p.b = append(m.p.b, body...)
	return m
}

func TestParseMetadataV1(t *testing.T) {
	m := (&metaBuilder{}).header(7, "MyEvent", 0xF0, 2, 4).v1Fields(
		Field{Name: "i", Type: TypeInt32},
		Field{Name: "s", Type: TypeString},
		Field{Name: "o", Type: TypeObject, Fields: []Field{{Name: "a", Type: TypeByte}}},
	).tag(1, []byte{9})
	md, err := ParseMetadata(m.p.b)
	if err != nil {
		t.Fatal(err)
	}
	want := &Metadata{ID: 7, Name: "MyEvent", Keywords: 0xF0, Version: 2, Level: 4, Opcode: 9, Params: []Field{
		{Name: "i", Type: TypeInt32}, {Name: "s", Type: TypeString},
		{Name: "o", Type: TypeObject, Fields: []Field{{Name: "a", Type: TypeByte}}},
	}}
	if !reflect.DeepEqual(md, want) {
		t.Fatalf("got %+v\nwant %+v", md, want)
	}
}

func TestParseMetadataV2Arrays(t *testing.T) {
	fields := []Field{
		{Name: "ch", Type: TypeChar},
		{Name: "intArray", Type: TypeArray, Elem: &Field{Type: TypeInt32}},
		{Name: "kv", Type: TypeArray, Elem: &Field{Type: TypeObject, Fields: []Field{{Name: "Key", Type: TypeString}, {Name: "Value", Type: TypeString}}}},
	}
	m := (&metaBuilder{}).header(2, "MyArrayEvent", 0, 0, 5).v1Fields().tag(2, v2Fields(fields))
	md, err := ParseMetadata(m.p.b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(md.Params, fields) {
		t.Fatalf("params %+v, want %+v", md.Params, fields)
	}
	var p Payload
	p.Char('d').UInt16(3).Int32(0).Int32(1).Int32(2).UInt16(1).String("samplekey").String("samplevalue")
	vals, err := DecodeFields(md.Params, p.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := []Value{
		{"ch", 'd'},
		{"intArray", []any{int32(0), int32(1), int32(2)}},
		{"kv", []any{[]Value{{"Key", "samplekey"}, {"Value", "samplevalue"}}}},
	}
	if !reflect.DeepEqual(vals, want) {
		t.Fatalf("got %#v\nwant %#v", vals, want)
	}
}

// Every type the writing API has, round trip through Payload and
// DecodeFields (the values of upstream's AllTypesEvent).
func TestPayloadAllTypes(t *testing.T) {
	g := uuid.MustParse("176FBED1-A55C-4796-98CA-A9DA0EF883E7")
	when := time.Date(2020, 1, 24, 20, 18, 36, 0, time.UTC)
	var p Payload
	p.Bool(true).Char('A').SByte(-124).Byte(125).Int16(-35).UInt16(98).Int32(-560).UInt32(561).
		Int64(2147483648).UInt64(2147483649).Single(3).Double(3.023).GUID(g).String("Hello, this is a string!").DateTime(when)
	fields := []Field{{"Boolean", TypeBoolean, nil, nil}, {"Char", TypeChar, nil, nil}, {"SByte", TypeSByte, nil, nil}, {"Byte", TypeByte, nil, nil},
		{"Int16", TypeInt16, nil, nil}, {"UInt16", TypeUInt16, nil, nil}, {"Int32", TypeInt32, nil, nil}, {"UInt32", TypeUInt32, nil, nil},
		{"Int64", TypeInt64, nil, nil}, {"UInt64", TypeUInt64, nil, nil}, {"Single", TypeSingle, nil, nil}, {"Double", TypeDouble, nil, nil},
		{"Guid", TypeGUID, nil, nil}, {"String", TypeString, nil, nil}, {"DateTime", TypeDateTime, nil, nil}}
	vals, err := DecodeFields(fields, p.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := []any{true, 'A', int8(-124), uint8(125), int16(-35), uint16(98), int32(-560), uint32(561), int64(2147483648), uint64(2147483649),
		float32(3), 3.023, g, "Hello, this is a string!", when}
	for i, v := range vals {
		if !reflect.DeepEqual(v.Value, want[i]) {
			t.Errorf("%s: got %#v, want %#v", v.Name, v.Value, want[i])
		}
	}
	// The FILETIME upstream writes is that date.
	ft := binary.LittleEndian.Uint64(p.Bytes()[len(p.Bytes())-8:])
	if ft != 132243707160000000 {
		t.Errorf("FILETIME %d, want 132243707160000000", ft)
	}
	// Short payloads and trailing bytes are errors.
	if _, err := DecodeFields(fields, p.Bytes()[:len(p.Bytes())-1]); !errors.Is(err, ErrShort) {
		t.Errorf("short payload: %v", err)
	}
	if _, err := DecodeFields(fields, append(p.Bytes(), 0)); err == nil {
		t.Errorf("trailing byte: no error")
	}
}

func TestDecodeRuntimeVersions(t *testing.T) {
	var p Payload
	// GCStart v2 and its v1 prefix.
	p.UInt32(12).UInt32(2).UInt32(1).UInt32(0).UInt16(7).UInt64(99)
	ev, err := DecodeRuntime(IDGCStart, 2, p.Bytes())
	if err != nil || !reflect.DeepEqual(ev, &GCStart{Version: 2, Count: 12, Depth: 2, Reason: 1, ClrInstanceID: 7, ClientSequenceNumber: 99}) {
		t.Errorf("GCStart v2: %+v %v", ev, err)
	}
	ev, err = DecodeRuntime(IDGCStart, 1, p.Bytes()[:18])
	if err != nil || !reflect.DeepEqual(ev, &GCStart{Version: 1, Count: 12, Depth: 2, Reason: 1, ClrInstanceID: 7}) {
		t.Errorf("GCStart v1: %+v %v", ev, err)
	}
	if _, err := DecodeRuntime(IDGCStart, 2, p.Bytes()[:18]); !errors.Is(err, ErrShort) {
		t.Errorf("GCStart v2 cut short: %v", err)
	}
	// GCStart v0: Count, Reason.
	ev, err = DecodeRuntime(IDGCStart, 0, []byte{5, 0, 0, 0, 3, 0, 0, 0})
	if err != nil || !reflect.DeepEqual(ev, &GCStart{Count: 5, Reason: 3}) {
		t.Errorf("GCStart v0: %+v %v", ev, err)
	}
	// GCEnd v0 has a 16-bit depth.
	ev, err = DecodeRuntime(IDGCEnd, 0, []byte{5, 0, 0, 0, 2, 0})
	if err != nil || !reflect.DeepEqual(ev, &GCEnd{Count: 5, Depth: 2}) {
		t.Errorf("GCEnd v0: %+v %v", ev, err)
	}
	// Allocation tick v4.
	p = Payload{}
	p.UInt32(100000).UInt32(1).UInt16(9).UInt64(100123).UInt64(0xabc).String("System.Byte[]").UInt32(0).UInt64(0x7f00).UInt64(85024)
	ev, err = DecodeRuntime(IDGCAllocationTick, 4, p.Bytes())
	want := &GCAllocationTick{Version: 4, AllocationAmount: 100000, AllocationKind: 1, ClrInstanceID: 9, AllocationAmount64: 100123, TypeID: 0xabc,
		TypeName: "System.Byte[]", Address: 0x7f00, ObjectSize: 85024}
	if err != nil || !reflect.DeepEqual(ev, want) {
		t.Errorf("GCAllocationTick v4: %+v %v", ev, err)
	}
	// A newer version with appended fields reads as the newest known.
	ev, err = DecodeRuntime(IDGCAllocationTick, 5, append(p.Bytes(), 1, 2, 3, 4))
	want.Version = 5
	if err != nil || !reflect.DeepEqual(ev, want) {
		t.Errorf("GCAllocationTick v5: %+v %v", ev, err)
	}
	// Contention stop v1, exception v1.
	p = Payload{}
	p.Byte(0).UInt16(1).Double(1234.5)
	ev, err = DecodeRuntime(IDContentionStop, 1, p.Bytes())
	if err != nil || !reflect.DeepEqual(ev, &ContentionStop{Version: 1, ClrInstanceID: 1, DurationNs: 1234.5}) {
		t.Errorf("ContentionStop v1: %+v %v", ev, err)
	}
	p = Payload{}
	p.String("System.InvalidOperationException").String("boom").UInt64(0x1234).UInt32(0x80131509).UInt16(0x10).UInt16(0)
	ev, err = DecodeRuntime(IDExceptionThrown, 1, p.Bytes())
	if err != nil || !reflect.DeepEqual(ev, &ExceptionThrown{Version: 1, ExceptionType: "System.InvalidOperationException", ExceptionMessage: "boom",
		ExceptionEIP: 0x1234, ExceptionHRESULT: 0x80131509, ExceptionFlags: 0x10}) {
		t.Errorf("ExceptionThrown v1: %+v %v", ev, err)
	}
	// An unknown event is passed raw, copied.
	data := []byte{1, 2, 3}
	ev, err = DecodeRuntime(4242, 1, data)
	data[0] = 9
	if err != nil || !reflect.DeepEqual(ev, &Raw{ID: 4242, Version: 1, Data: []byte{1, 2, 3}}) {
		t.Errorf("unknown: %+v %v", ev, err)
	}
}

func FuzzParseMetadata(f *testing.F) {
	f.Add((&metaBuilder{}).header(7, "MyEvent", 0xF0, 2, 4).v1Fields(Field{Name: "i", Type: TypeInt32}).tag(1, []byte{9}).p.b, []byte{1, 0, 0, 0})
	f.Add((&metaBuilder{}).header(2, "A", 0, 0, 5).v1Fields().tag(2, v2Fields([]Field{{Name: "x", Type: TypeArray, Elem: &Field{Type: TypeInt32}}})).p.b,
		[]byte{2, 0, 1, 0, 0, 0, 2, 0, 0, 0})
	f.Add([]byte{}, []byte{})
	f.Fuzz(func(t *testing.T, meta, payload []byte) {
		md, err := ParseMetadata(meta)
		if err != nil {
			return
		}
		DecodeFields(md.Params, payload)
	})
}

func FuzzDecodeRuntime(f *testing.F) {
	var p Payload
	p.UInt32(100000).UInt32(1).UInt16(9).UInt64(100123).UInt64(0xabc).String("System.Byte[]").UInt32(0).UInt64(0x7f00).UInt64(85024)
	f.Add(IDGCAllocationTick, uint32(4), p.Bytes())
	f.Add(IDGCStart, uint32(2), make([]byte, 26))
	f.Add(IDExceptionThrown, uint32(1), []byte{65, 0, 0, 0, 0, 0})
	f.Add(IDContentionStart, uint32(2), make([]byte, 27))
	for _, c := range realAllocationSampled {
		f.Add(IDAllocationSampled, uint32(0), realPayload(f, c.hex))
	}
	f.Fuzz(func(t *testing.T, id, version uint32, data []byte) {
		ev, err := DecodeRuntime(id, version, data)
		if err == nil && ev == nil {
			t.Fatal("nil event without an error")
		}
		// The quick read of an allocation tick's bytes agrees with the
		// full decoder wherever that one succeeds.
		n, ok := AllocationTickBytes(version, data)
		if e, is := ev.(*GCAllocationTick); is && err == nil {
			want := uint64(e.AllocationAmount)
			if version >= 2 {
				want = e.AllocationAmount64
			}
			if !ok || n != want {
				t.Fatalf("AllocationTickBytes = %d, %v; DecodeRuntime says %d", n, ok, want)
			}
		}
	})
}

func TestAllocationTickBytes(t *testing.T) {
	var p Payload
	p.UInt32(100000).UInt32(1).UInt16(9).UInt64(100123).UInt64(0xabc).String("System.Byte[]").UInt32(0).UInt64(0x7f00).UInt64(85024)
	for _, c := range []struct {
		version uint32
		data    []byte
		want    uint64
		ok      bool
	}{
		{4, p.Bytes(), 100123, true},
		{2, p.Bytes(), 100123, true},
		{1, p.Bytes(), 100000, true},
		{0, p.Bytes()[:4], 100000, true},
		{4, p.Bytes()[:17], 0, false},
		{0, p.Bytes()[:3], 0, false},
	} {
		if n, ok := AllocationTickBytes(c.version, c.data); n != c.want || ok != c.ok {
			t.Errorf("version %d, %d bytes: %d, %v; want %d, %v", c.version, len(c.data), n, ok, c.want, c.ok)
		}
	}
}
