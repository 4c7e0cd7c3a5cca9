package export

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"

	"github.com/google/pprof/profile"
)

// ScopeName is the instrumentation scope of the OTLP profiles an Exporter
// sends.
const ScopeName = "github.com/clrprof/clrprof/pprofbuild/export"

// Attribute keys of the OTLP profiles: the pprof comments (the semantic
// conventions' pprof.profile.comment, a string array) and the profile's
// name (Profile.Name).
const (
	AttrComment     = "pprof.profile.comment"
	AttrProfileName = "profile.name"
)

// dict builds a ProfilesDictionary: every table's entry 0 is the zero
// value, every entry is unique.
type dict struct {
	d     *wireDict
	strs  map[string]int32
	fns   map[string]int32
	maps  map[string]int32
	locs  map[string]int32
	stks  map[string]int32
	attrs map[string]int32
	links map[string]int32
}

func newDict() *dict {
	return &dict{
		d: &wireDict{
			MappingTable:   []*wireMapping{{}},
			LocationTable:  []*wireLocation{{}},
			FunctionTable:  []*wireFunction{{}},
			LinkTable:      []*wireLink{{TraceID: make([]byte, 16), SpanID: make([]byte, 8)}},
			StringTable:    []string{""},
			AttributeTable: []*wireAttr{{}},
			StackTable:     []*wireStack{{}},
		},
		strs: map[string]int32{"": 0}, fns: map[string]int32{}, maps: map[string]int32{},
		locs: map[string]int32{}, stks: map[string]int32{}, attrs: map[string]int32{}, links: map[string]int32{},
	}
}

func (d *dict) str(s string) int32 {
	if i, ok := d.strs[s]; ok {
		return i
	}
	i := int32(len(d.d.StringTable))
	d.d.StringTable = append(d.d.StringTable, s)
	d.strs[s] = i
	return i
}

// ints is a map key of vs.
func ints(vs ...int64) string {
	b := make([]byte, 0, 8*len(vs))
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	return string(b)
}

func (d *dict) function(f *profile.Function) int32 {
	if f == nil {
		return 0
	}
	fn := &wireFunction{NameStrindex: d.str(f.Name), SystemNameStrindex: d.str(f.SystemName), FilenameStrindex: d.str(f.Filename), StartLine: f.StartLine}
	k := ints(int64(fn.NameStrindex), int64(fn.SystemNameStrindex), int64(fn.FilenameStrindex), fn.StartLine)
	if i, ok := d.fns[k]; ok {
		return i
	}
	i := int32(len(d.d.FunctionTable))
	d.d.FunctionTable = append(d.d.FunctionTable, fn)
	d.fns[k] = i
	return i
}

func (d *dict) mapping(m *profile.Mapping) int32 {
	if m == nil {
		return 0
	}
	mp := &wireMapping{MemoryStart: m.Start, MemoryLimit: m.Limit, FileOffset: m.Offset, FilenameStrindex: d.str(m.File)}
	if m.BuildID != "" {
		mp.AttributeIndices = []int32{d.attr("process.executable.build_id.gnu", strValue(m.BuildID), "")}
	}
	k := ints(int64(m.Start), int64(m.Limit), int64(m.Offset), int64(mp.FilenameStrindex)) + m.BuildID
	if i, ok := d.maps[k]; ok {
		return i
	}
	i := int32(len(d.d.MappingTable))
	d.d.MappingTable = append(d.d.MappingTable, mp)
	d.maps[k] = i
	return i
}

func (d *dict) location(l *profile.Location) int32 {
	loc := &wireLocation{MappingIndex: d.mapping(l.Mapping), Address: l.Address}
	key := []int64{int64(loc.MappingIndex), int64(l.Address)}
	for _, ln := range l.Line {
		line := &wireLine{FunctionIndex: d.function(ln.Function), Line: ln.Line, Column: ln.Column}
		loc.Lines = append(loc.Lines, line)
		key = append(key, int64(line.FunctionIndex), line.Line, line.Column)
	}
	k := ints(key...)
	if i, ok := d.locs[k]; ok {
		return i
	}
	i := int32(len(d.d.LocationTable))
	d.d.LocationTable = append(d.d.LocationTable, loc)
	d.locs[k] = i
	return i
}

func (d *dict) stack(locs []int32) int32 {
	kb := make([]byte, 0, 4*len(locs))
	for _, l := range locs {
		kb = binary.LittleEndian.AppendUint32(kb, uint32(l))
	}
	k := string(kb)
	if i, ok := d.stks[k]; ok {
		return i
	}
	i := int32(len(d.d.StackTable))
	d.d.StackTable = append(d.d.StackTable, &wireStack{LocationIndices: locs})
	d.stks[k] = i
	return i
}

func (d *dict) attr(key string, v wireValue, unit string) int32 {
	k := key + "\x00" + string(v.appendKey(nil)) + "\x00" + unit
	if i, ok := d.attrs[k]; ok {
		return i
	}
	kv := &wireAttr{KeyStrindex: d.str(key), Value: v}
	if unit != "" {
		kv.UnitStrindex = d.str(unit)
	}
	i := int32(len(d.d.AttributeTable))
	d.d.AttributeTable = append(d.d.AttributeTable, kv)
	d.attrs[k] = i
	return i
}

func (d *dict) link(trace, span []byte) int32 {
	k := string(trace) + string(span)
	if i, ok := d.links[k]; ok {
		return i
	}
	i := int32(len(d.d.LinkTable))
	d.d.LinkTable = append(d.d.LinkTable, &wireLink{TraceID: trace, SpanID: span})
	d.links[k] = i
	return i
}

func strValue(s string) wireValue { return wireValue{Kind: valueString, Str: s} }

func strValues(ss []string) wireValue {
	if len(ss) == 1 {
		return strValue(ss[0])
	}
	arr := wireValue{Kind: valueArray}
	for _, s := range ss {
		arr.Array = append(arr.Array, strValue(s))
	}
	return arr
}

// spanLink returns the trace and span IDs of a sample's labels trace_id
// (32 hex digits) and span_id (16), nil if it has not both.
func spanLink(labels map[string][]string) (trace, span []byte) {
	t, s := labels[LabelTraceID], labels[LabelSpanID]
	if len(t) != 1 || len(s) != 1 {
		return nil, nil
	}
	tb, err1 := hex.DecodeString(t[0])
	sb, err2 := hex.DecodeString(s[0])
	if err1 != nil || err2 != nil || len(tb) != 16 || len(sb) != 8 {
		return nil, nil
	}
	return tb, sb
}

// Labels of the samples taken inside a span: the trace's and the span's
// IDs in lowercase hex, as Pyroscope and OpenTelemetry's profilers name
// them. The OTLP exporter turns them into the sample's link.
const (
	LabelTraceID = "trace_id"
	LabelSpanID  = "span_id"
)

// toOTLP converts the pprof profile pp into OTLP profiles, one per sample
// type (the OTLP profile has one), into d; none if pp has no samples. name becomes the profiles'
// profile.name attribute.
func toOTLP(d *dict, name string, pp *profile.Profile) []*wireProfile {
	if len(pp.Sample) == 0 {
		return nil
	}
	var common []int32
	if name != "" {
		common = append(common, d.attr(AttrProfileName, strValue(name), ""))
	}
	if len(pp.Comments) > 0 {
		common = append(common, d.attr(AttrComment, strValues(pp.Comments), ""))
	}
	// stacks and attributes once per sample, shared by the sample types
	type conv struct {
		stack int32
		attrs []int32
		link  int32
	}
	locIdx := map[*profile.Location]int32{}
	convs := make([]conv, len(pp.Sample))
	for i, s := range pp.Sample {
		locs := make([]int32, len(s.Location))
		for j, l := range s.Location {
			li, ok := locIdx[l]
			if !ok {
				li = d.location(l)
				locIdx[l] = li
			}
			locs[j] = li
		}
		c := conv{stack: d.stack(locs)}
		trace, span := spanLink(s.Label)
		if trace != nil {
			c.link = d.link(trace, span)
		}
		for _, k := range sortedKeys(s.Label) {
			if trace != nil && (k == LabelTraceID || k == LabelSpanID) {
				continue
			}
			c.attrs = append(c.attrs, d.attr(k, strValues(s.Label[k]), ""))
		}
		for _, k := range sortedKeys(s.NumLabel) {
			vs := s.NumLabel[k]
			unit := ""
			if us := s.NumUnit[k]; len(us) > 0 {
				unit = us[0]
			}
			var v wireValue
			if len(vs) == 1 {
				v = wireValue{Kind: valueInt, Int: vs[0]}
			} else {
				v = wireValue{Kind: valueArray}
				for _, n := range vs {
					v.Array = append(v.Array, wireValue{Kind: valueInt, Int: n})
				}
			}
			c.attrs = append(c.attrs, d.attr(k, v, unit))
		}
		convs[i] = c
	}
	var out []*wireProfile
	for ti, st := range pp.SampleType {
		op := &wireProfile{
			SampleType:       &wireValueType{TypeStrindex: d.str(st.Type), UnitStrindex: d.str(st.Unit)},
			TimeUnixNano:     uint64(max(pp.TimeNanos, 0)),
			DurationNano:     uint64(max(pp.DurationNanos, 0)),
			Period:           pp.Period,
			ProfileID:        newID(),
			AttributeIndices: common,
		}
		if pp.PeriodType != nil {
			op.PeriodType = &wireValueType{TypeStrindex: d.str(pp.PeriodType.Type), UnitStrindex: d.str(pp.PeriodType.Unit)}
		}
		for i, s := range pp.Sample {
			c := convs[i]
			op.Samples = append(op.Samples, &wireSample{StackIndex: c.stack, AttributeIndices: c.attrs, LinkIndex: c.link, Values: []int64{s.Value[ti]}})
		}
		out = append(out, op)
	}
	return out
}

func newID() []byte {
	b := make([]byte, 16)
	rand.Read(b)
	return b
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}

func resourceAttrs(r Resource) []wireKeyValue {
	var kvs []wireKeyValue
	for _, a := range r {
		v := strValue(attrString(a.Value))
		if x, ok := a.Value.(int64); ok {
			v = wireValue{Kind: valueInt, Int: x}
		}
		kvs = append(kvs, wireKeyValue{Key: a.Key, Value: v})
	}
	return kvs
}
