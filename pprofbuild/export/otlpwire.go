package export

import (
	"encoding/binary"

	"google.golang.org/protobuf/encoding/protowire"
)

// The OTLP profiles messages this package sends, written with protowire
// rather than through the generated types of
// go.opentelemetry.io/proto/otlp: those bring protobuf's reflection, and
// their gRPC stubs grpc-go and grpc-gateway, into every profiler that
// links the exporter, about 4 MiB of a library whose pages are all
// resident (docs/cost.md, "Memory"). The field numbers are those of
// ProtoVersion's .proto files (opentelemetry/proto/profiles/v1development
// and collector/profiles/v1development, common/v1, resource/v1); the tests
// decode what these write with the generated types.

// valueKind is which of AnyValue's oneof fields a wireValue is.
type valueKind uint8

const (
	valueNone valueKind = iota // no value: the attribute table's zero entry
	valueString
	valueInt
	valueArray
)

// wireValue is an opentelemetry.proto.common.v1.AnyValue: string_value
// (1), int_value (3) or array_value (5, an ArrayValue of values (1)).
type wireValue struct {
	Kind  valueKind
	Str   string
	Int   int64
	Array []wireValue
}

// appendKey appends a string that is equal for equal values only.
func (v wireValue) appendKey(b []byte) []byte {
	b = append(b, byte(v.Kind))
	switch v.Kind {
	case valueString:
		b = binary.AppendUvarint(b, uint64(len(v.Str)))
		b = append(b, v.Str...)
	case valueInt:
		b = binary.AppendVarint(b, v.Int)
	case valueArray:
		b = binary.AppendUvarint(b, uint64(len(v.Array)))
		for _, e := range v.Array {
			b = e.appendKey(b)
		}
	}
	return b
}

func (v wireValue) marshal(b []byte) []byte {
	switch v.Kind {
	case valueString: // a oneof member: written even when empty
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, v.Str)
	case valueInt:
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(v.Int))
	case valueArray:
		var arr []byte
		for _, e := range v.Array {
			arr = appendMessage(arr, 1, e.marshal)
		}
		b = protowire.AppendTag(b, 5, protowire.BytesType)
		b = protowire.AppendBytes(b, arr)
	}
	return b
}

// wireKeyValue is a common.v1.KeyValue: key (1), value (2).
type wireKeyValue struct {
	Key   string
	Value wireValue
}

func (kv wireKeyValue) marshal(b []byte) []byte {
	b = appendString(b, 1, kv.Key)
	return appendMessage(b, 2, kv.Value.marshal)
}

// wireDict is a profiles.v1development.ProfilesDictionary.
type wireDict struct {
	MappingTable   []*wireMapping  // 1
	LocationTable  []*wireLocation // 2
	FunctionTable  []*wireFunction // 3
	LinkTable      []*wireLink     // 4
	StringTable    []string        // 5
	AttributeTable []*wireAttr     // 6
	StackTable     []*wireStack    // 7
}

func (d *wireDict) marshal(b []byte) []byte {
	for _, m := range d.MappingTable {
		b = appendMessage(b, 1, m.marshal)
	}
	for _, l := range d.LocationTable {
		b = appendMessage(b, 2, l.marshal)
	}
	for _, f := range d.FunctionTable {
		b = appendMessage(b, 3, f.marshal)
	}
	for _, l := range d.LinkTable {
		b = appendMessage(b, 4, l.marshal)
	}
	for _, s := range d.StringTable { // repeated: every entry, "" too
		b = protowire.AppendTag(b, 5, protowire.BytesType)
		b = protowire.AppendString(b, s)
	}
	for _, a := range d.AttributeTable {
		b = appendMessage(b, 6, a.marshal)
	}
	for _, s := range d.StackTable {
		b = appendMessage(b, 7, s.marshal)
	}
	return b
}

// wireMapping is a Mapping: memory_start (1), memory_limit (2),
// file_offset (3), filename_strindex (4), attribute_indices (5).
type wireMapping struct {
	MemoryStart, MemoryLimit, FileOffset uint64
	FilenameStrindex                     int32
	AttributeIndices                     []int32
}

func (m *wireMapping) marshal(b []byte) []byte {
	b = appendUint(b, 1, m.MemoryStart)
	b = appendUint(b, 2, m.MemoryLimit)
	b = appendUint(b, 3, m.FileOffset)
	b = appendInt(b, 4, int64(m.FilenameStrindex))
	return appendPacked32(b, 5, m.AttributeIndices)
}

// wireLocation is a Location: mapping_index (1), address (2), lines (3).
type wireLocation struct {
	MappingIndex int32
	Address      uint64
	Lines        []*wireLine
}

func (l *wireLocation) marshal(b []byte) []byte {
	b = appendInt(b, 1, int64(l.MappingIndex))
	b = appendUint(b, 2, l.Address)
	for _, ln := range l.Lines {
		b = appendMessage(b, 3, ln.marshal)
	}
	return b
}

// wireLine is a Line: function_index (1), line (2), column (3).
type wireLine struct {
	FunctionIndex int32
	Line, Column  int64
}

func (l *wireLine) marshal(b []byte) []byte {
	b = appendInt(b, 1, int64(l.FunctionIndex))
	b = appendInt(b, 2, l.Line)
	return appendInt(b, 3, l.Column)
}

// wireFunction is a Function: name_strindex (1), system_name_strindex
// (2), filename_strindex (3), start_line (4).
type wireFunction struct {
	NameStrindex, SystemNameStrindex, FilenameStrindex int32
	StartLine                                          int64
}

func (f *wireFunction) marshal(b []byte) []byte {
	b = appendInt(b, 1, int64(f.NameStrindex))
	b = appendInt(b, 2, int64(f.SystemNameStrindex))
	b = appendInt(b, 3, int64(f.FilenameStrindex))
	return appendInt(b, 4, f.StartLine)
}

// wireLink is a Link: trace_id (1), span_id (2).
type wireLink struct{ TraceID, SpanID []byte }

func (l *wireLink) marshal(b []byte) []byte {
	b = appendBytes(b, 1, l.TraceID)
	return appendBytes(b, 2, l.SpanID)
}

// wireAttr is a KeyValueAndUnit: key_strindex (1), value (2),
// unit_strindex (3). The zero entry of the table has no value.
type wireAttr struct {
	KeyStrindex  int32
	Value        wireValue
	UnitStrindex int32
}

func (a *wireAttr) marshal(b []byte) []byte {
	b = appendInt(b, 1, int64(a.KeyStrindex))
	if a.Value.Kind != valueNone {
		b = appendMessage(b, 2, a.Value.marshal)
	}
	return appendInt(b, 3, int64(a.UnitStrindex))
}

// wireStack is a Stack: location_indices (1).
type wireStack struct{ LocationIndices []int32 }

func (s *wireStack) marshal(b []byte) []byte { return appendPacked32(b, 1, s.LocationIndices) }

// wireValueType is a ValueType: type_strindex (1), unit_strindex (2).
type wireValueType struct{ TypeStrindex, UnitStrindex int32 }

func (v *wireValueType) marshal(b []byte) []byte {
	b = appendInt(b, 1, int64(v.TypeStrindex))
	return appendInt(b, 2, int64(v.UnitStrindex))
}

// wireSample is a Sample: stack_index (1), attribute_indices (2),
// link_index (3), values (4).
type wireSample struct {
	StackIndex       int32
	AttributeIndices []int32
	LinkIndex        int32
	Values           []int64
}

func (s *wireSample) marshal(b []byte) []byte {
	b = appendInt(b, 1, int64(s.StackIndex))
	b = appendPacked32(b, 2, s.AttributeIndices)
	b = appendInt(b, 3, int64(s.LinkIndex))
	if len(s.Values) > 0 {
		var p []byte
		for _, v := range s.Values {
			p = protowire.AppendVarint(p, uint64(v))
		}
		b = appendBytes(b, 4, p)
	}
	return b
}

// wireProfile is a Profile: sample_type (1), samples (2), time_unix_nano
// (3, fixed64), duration_nano (4), period_type (5), period (6),
// profile_id (7), attribute_indices (11).
type wireProfile struct {
	SampleType       *wireValueType
	Samples          []*wireSample
	TimeUnixNano     uint64
	DurationNano     uint64
	PeriodType       *wireValueType
	Period           int64
	ProfileID        []byte
	AttributeIndices []int32
}

func (p *wireProfile) marshal(b []byte) []byte {
	if p.SampleType != nil {
		b = appendMessage(b, 1, p.SampleType.marshal)
	}
	for _, s := range p.Samples {
		b = appendMessage(b, 2, s.marshal)
	}
	if p.TimeUnixNano != 0 {
		b = protowire.AppendTag(b, 3, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, p.TimeUnixNano)
	}
	b = appendUint(b, 4, p.DurationNano)
	if p.PeriodType != nil {
		b = appendMessage(b, 5, p.PeriodType.marshal)
	}
	b = appendInt(b, 6, p.Period)
	b = appendBytes(b, 7, p.ProfileID)
	return appendPacked32(b, 11, p.AttributeIndices)
}

// marshalRequest writes a collector.profiles.v1development
// ExportProfilesServiceRequest: resource_profiles (1) with one
// ResourceProfiles, a Resource (1: attributes (1)) and one ScopeProfiles
// (2: an InstrumentationScope (1: name (1)) and the profiles (2)); the
// dictionary (2).
func marshalRequest(res []wireKeyValue, scope string, profiles []*wireProfile, d *wireDict) []byte {
	resource := func(b []byte) []byte {
		for _, kv := range res {
			b = appendMessage(b, 1, kv.marshal)
		}
		return b
	}
	scopeProfiles := func(b []byte) []byte {
		b = appendMessage(b, 1, func(b []byte) []byte { return appendString(b, 1, scope) })
		for _, p := range profiles {
			b = appendMessage(b, 2, p.marshal)
		}
		return b
	}
	rp := func(b []byte) []byte {
		b = appendMessage(b, 1, resource)
		return appendMessage(b, 2, scopeProfiles)
	}
	b := appendMessage(nil, 1, rp)
	return appendMessage(b, 2, d.marshal)
}

// parseResponse reads an ExportProfilesServiceResponse: partial_success
// (1) with rejected_profiles (1) and error_message (2).
func parseResponse(b []byte) (rejected int64, message string, err error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, "", protowire.ParseError(n)
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			ps, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return 0, "", protowire.ParseError(n)
			}
			b = b[n:]
			for len(ps) > 0 {
				num, typ, n := protowire.ConsumeTag(ps)
				if n < 0 {
					return 0, "", protowire.ParseError(n)
				}
				ps = ps[n:]
				switch {
				case num == 1 && typ == protowire.VarintType:
					v, n := protowire.ConsumeVarint(ps)
					if n < 0 {
						return 0, "", protowire.ParseError(n)
					}
					rejected, ps = int64(v), ps[n:]
				case num == 2 && typ == protowire.BytesType:
					v, n := protowire.ConsumeBytes(ps)
					if n < 0 {
						return 0, "", protowire.ParseError(n)
					}
					message, ps = string(v), ps[n:]
				default:
					n := protowire.ConsumeFieldValue(num, typ, ps)
					if n < 0 {
						return 0, "", protowire.ParseError(n)
					}
					ps = ps[n:]
				}
			}
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return 0, "", protowire.ParseError(n)
		}
		b = b[n:]
	}
	return rejected, message, nil
}

// appendMessage appends field num holding the message body writes.
func appendMessage(b []byte, num protowire.Number, body func([]byte) []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	// reserve one length byte, write the body, then make room for a
	// longer length if it needs one
	at := len(b)
	b = append(b, 0)
	b = body(b)
	n := len(b) - at - 1
	sz := protowire.SizeVarint(uint64(n))
	if sz == 1 {
		b[at] = byte(n)
		return b
	}
	b = append(b, make([]byte, sz-1)...)
	copy(b[at+sz:], b[at+1:at+1+n])
	protowire.AppendVarint(b[at:at], uint64(n))
	return b
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendUint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// appendInt writes an int32 or int64 field: negative values as ten-byte
// varints, as protobuf does.
func appendInt(b []byte, num protowire.Number, v int64) []byte { return appendUint(b, num, uint64(v)) }

func appendPacked32(b []byte, num protowire.Number, vs []int32) []byte {
	if len(vs) == 0 {
		return b
	}
	var p []byte
	for _, v := range vs {
		p = protowire.AppendVarint(p, uint64(int64(v)))
	}
	return appendBytes(b, num, p)
}
