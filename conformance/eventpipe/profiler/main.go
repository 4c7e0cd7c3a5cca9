// Command profiler is the eventpipe scenario's profiler: it creates an
// EventPipe provider, defines four events (every parameter type, an Int32
// array, no parameters, one Int32), starts an in-process session on its
// provider, and when the runtime compiles TriggerMethod writes AllTypesEvent
// and ArrayTypeEvent once, EmptyEvent 10 times and SimpleEvent 10000 times
// with the values 0..9999. The events come back through
// EventPipeEventDelivered: every one must carry its metadata (name, ID,
// version, parameter names and types) and the values written, SimpleEvent
// in order, and the counts must be exact. On .NET 8 and later the provider
// is created with a callback (EventPipeCreateProvider2), which must be told
// of the session's enabling and disabling, with the keywords and level the
// session asked for.
package main

import (
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/clrprof/clrprof/clrevents"
	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/profiler"
	"github.com/google/uuid"
)

const providerName = "MySuperAwesomeEventPipeProvider"

var (
	testGUID = uuid.MustParse("176FBED1-A55C-4796-98CA-A9DA0EF883E7")
	testTime = time.Date(2020, 1, 24, 20, 18, 36, 0, time.UTC)
)

// The definitions, as upstream's writing profiler has them.
var (
	allTypes = profiler.EventPipeEventDefinition{Name: "AllTypesEvent", ID: 1, Version: 1, Level: profiler.EventPipeLogAlways, NeedStack: true,
		Params: []profiler.EventPipeParam{
			{Name: "Boolean", Type: profiler.EventPipeBoolean}, {Name: "Char", Type: profiler.EventPipeChar},
			{Name: "SByte", Type: profiler.EventPipeSByte}, {Name: "Byte", Type: profiler.EventPipeByte},
			{Name: "Int16", Type: profiler.EventPipeInt16}, {Name: "UInt16", Type: profiler.EventPipeUint16},
			{Name: "Int32", Type: profiler.EventPipeInt32}, {Name: "UInt32", Type: profiler.EventPipeUint32},
			{Name: "Int64", Type: profiler.EventPipeInt64}, {Name: "UInt64", Type: profiler.EventPipeUint64},
			{Name: "Single", Type: profiler.EventPipeSingle}, {Name: "Double", Type: profiler.EventPipeDouble},
			{Name: "Guid", Type: profiler.EventPipeGUID}, {Name: "String", Type: profiler.EventPipeString},
			{Name: "DateTime", Type: profiler.EventPipeDatetime},
		}}
	arrayType = profiler.EventPipeEventDefinition{Name: "ArrayTypeEvent", ID: 3, Version: 1, Level: profiler.EventPipeLogAlways, NeedStack: true,
		Params: []profiler.EventPipeParam{{Name: "IntArray", Type: profiler.EventPipeArray, ElementType: profiler.EventPipeInt32}}}
	empty  = profiler.EventPipeEventDefinition{Name: "EmptyEvent", ID: 2032, Version: 1, Level: profiler.EventPipeInformational}
	simple = profiler.EventPipeEventDefinition{Name: "SimpleEvent", ID: 2, Version: 1, Level: profiler.EventPipeVerbose, NeedStack: true,
		Params: []profiler.EventPipeParam{{Name: "Int32", Type: profiler.EventPipeInt32}}}
)

type eventpipe struct {
	profiler.Base
	info     *profiler.Info
	provider profiler.EventPipeProvider
	session  profiler.EventPipeSession
	events   map[string]profiler.EventPipeEvent
	written  bool

	mu     sync.Mutex
	counts map[string]int
	stacks int // events delivered with stack frames

	sawEnable, sawDisable bool // the provider callback (EventPipeCreateProvider2)
}

func (p *eventpipe) Initialize(info *profiler.Info) error {
	p.info = info
	p.events = map[string]profiler.EventPipeEvent{}
	p.counts = map[string]int{}
	if err := info.SetEventMask2(profiler.MonitorJITCompilation|profiler.MonitorCacheSearches, profiler.HighEventPipe); err != nil {
		check.Failf("SetEventMask2: %v", err)
		return err
	}
	var err error
	if info.Version() >= 14 {
		// .NET 8+: a provider with a callback, told of the session's
		// enabling and disabling.
		p.provider, err = info.EventPipeCreateProvider2(providerName, p.providerChanged)
	} else {
		p.provider, err = info.EventPipeCreateProvider(providerName)
	}
	if err != nil {
		check.Failf("EventPipeCreateProvider: %v", err)
		return err
	}
	if name, err := info.EventPipeGetProviderInfo(p.provider); err != nil || name != providerName {
		check.Failf("EventPipeGetProviderInfo: %q, %v", name, err)
	}
	for _, def := range []profiler.EventPipeEventDefinition{allTypes, arrayType, empty, simple} {
		ev, err := info.EventPipeDefineEvent(p.provider, def)
		if err != nil {
			check.Failf("EventPipeDefineEvent %s: %v", def.Name, err)
			return err
		}
		p.events[def.Name] = ev
	}
	p.session, err = info.EventPipeStartSession([]profiler.EventPipeProviderSettings{{Name: providerName, Keywords: 0xF00000000000, Level: profiler.EventPipeVerbose}}, false)
	if err != nil {
		check.Failf("EventPipeStartSession: %v", err)
		return err
	}
	return nil
}

// providerChanged checks what the session told the provider: the keywords
// and level it was started with.
func (p *eventpipe) providerChanged(c profiler.EventPipeProviderChange) {
	p.mu.Lock()
	if c.Enabled {
		p.sawEnable = true
	} else {
		p.sawDisable = true
	}
	p.mu.Unlock()
	check.Logf("provider callback: enabled=%v level=%d any=%#x all=%#x", c.Enabled, c.Level, c.MatchAnyKeywords, c.MatchAllKeywords)
	check.That(c.MatchAnyKeywords == 0xF00000000000 && c.MatchAllKeywords == 0 && c.Level == profiler.EventPipeVerbose,
		"provider callback: any=%#x all=%#x level=%d, want 0xf00000000000, 0, 5", c.MatchAnyKeywords, c.MatchAllKeywords, c.Level)
}

func (p *eventpipe) JITCompilationStarted(f profiler.FunctionID, safeToBlock bool) error {
	return p.seen(f)
}

func (p *eventpipe) JITCachedFunctionSearchFinished(f profiler.FunctionID, result profiler.JITCache) error {
	if result == profiler.CachedFunctionFound {
		return p.seen(f)
	}
	return nil
}

func (p *eventpipe) seen(f profiler.FunctionID) error {
	name, err := p.info.FunctionName(f)
	if err != nil || name != "EventPipeApp.TriggerMethod" || p.written {
		return nil
	}
	p.written = true
	check.Logf("TriggerMethod found: writing the events")
	write := func(name string, payload []byte) bool {
		if err := p.info.EventPipeWriteEvent(p.events[name], payload, uuid.UUID{}, uuid.UUID{}); err != nil {
			check.Failf("EventPipeWriteEvent %s: %v", name, err)
			return false
		}
		return true
	}
	var all clrevents.Payload
	all.Bool(true).Char('A').SByte(-124).Byte(125).Int16(-35).UInt16(98).Int32(-560).UInt32(561).Int64(2147483648).UInt64(2147483649).
		Single(3).Double(3.023).GUID(testGUID).String("Hello, this is a string!").DateTime(testTime)
	if !write("AllTypesEvent", all.Bytes()) {
		return nil
	}
	var arr clrevents.Payload
	arr.UInt16(100)
	for i := 0; i < 100; i++ {
		arr.Int32(int32(100 - i))
	}
	if !write("ArrayTypeEvent", arr.Bytes()) {
		return nil
	}
	for i := 0; i < 10; i++ {
		if !write("EmptyEvent", nil) {
			return nil
		}
	}
	for i := int32(0); i < 10000; i++ {
		var s clrevents.Payload
		if !write("SimpleEvent", s.Int32(i).Bytes()) {
			return nil
		}
	}
	// The session delivers synchronously: every event is in by now.
	if err := p.info.EventPipeStopSession(p.session); err != nil {
		check.Failf("EventPipeStopSession: %v", err)
	}
	return nil
}

func (p *eventpipe) EventPipeEventDelivered(provider profiler.EventPipeProvider, eventID, eventVersion uint32, metadataBlob, eventData []byte,
	activityID, relatedActivityID uuid.UUID, thread profiler.ThreadID, stack []profiler.Address) error {
	if provider != p.provider {
		return nil
	}
	md, err := clrevents.ParseMetadata(metadataBlob)
	if err != nil {
		check.Failf("event %d: metadata: %v", eventID, err)
		return nil
	}
	var def *profiler.EventPipeEventDefinition
	for _, d := range []*profiler.EventPipeEventDefinition{&allTypes, &arrayType, &empty, &simple} {
		if d.Name == md.Name {
			def = d
		}
	}
	if def == nil {
		check.Failf("an event of our provider with an unknown name %q (id %d)", md.Name, eventID)
		return nil
	}
	if md.ID != def.ID || eventID != def.ID || eventVersion != def.Version || md.Version != def.Version || md.Level != uint32(def.Level) {
		check.Failf("%s: id %d/%d version %d/%d level %d, defined id %d version %d level %d", def.Name, eventID, md.ID, eventVersion, md.Version, md.Level, def.ID, def.Version, def.Level)
	}
	if len(md.Params) != len(def.Params) {
		check.Failf("%s: %d parameters in the metadata, %d defined", def.Name, len(md.Params), len(def.Params))
		return nil
	}
	for i, dp := range def.Params {
		mp := md.Params[i]
		elemOK := dp.Type != profiler.EventPipeArray || (mp.Elem != nil && uint32(mp.Elem.Type) == uint32(dp.ElementType))
		if mp.Name != dp.Name || uint32(mp.Type) != uint32(dp.Type) || !elemOK {
			check.Failf("%s: parameter %d is %q %v in the metadata, defined %q %d", def.Name, i, mp.Name, mp.Type, dp.Name, dp.Type)
		}
	}
	vals, err := clrevents.DecodeFields(md.Params, eventData)
	if err != nil {
		check.Failf("%s: payload: %v", def.Name, err)
		return nil
	}
	p.mu.Lock()
	n := p.counts[def.Name]
	p.counts[def.Name] = n + 1
	if len(stack) > 0 {
		p.stacks++
	}
	p.mu.Unlock()
	switch def.Name {
	case "AllTypesEvent":
		want := []any{true, 'A', int8(-124), uint8(125), int16(-35), uint16(98), int32(-560), uint32(561), int64(2147483648), uint64(2147483649),
			float32(3), 3.023, testGUID, "Hello, this is a string!", testTime}
		for i, v := range vals {
			if !reflect.DeepEqual(v.Value, want[i]) {
				check.Failf("AllTypesEvent %s: %#v, want %#v", v.Name, v.Value, want[i])
			}
		}
	case "ArrayTypeEvent":
		a, _ := vals[0].Value.([]any)
		ok := len(a) == 100
		for i := 0; ok && i < 100; i++ {
			ok = a[i] == int32(100-i)
		}
		check.That(ok, "ArrayTypeEvent: IntArray %v, want 100 down to 1", vals[0].Value)
	case "SimpleEvent":
		check.That(vals[0].Value == int32(n), "SimpleEvent %d: value %v (out of order)", n, vals[0].Value)
	}
	return nil
}

func (p *eventpipe) Shutdown() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	// Upstream does not check stacks; .NET 8.0.4 delivers these events
	// (written from inside JITCompilationStarted) without frames.
	check.Logf("events delivered with a stack: %d", p.stacks)
	want := map[string]int{"AllTypesEvent": 1, "ArrayTypeEvent": 1, "EmptyEvent": 10, "SimpleEvent": 10000}
	final, callbacks := "", ""
	if p.info.Version() >= 14 && !(p.sawEnable && p.sawDisable) {
		callbacks = fmt.Sprintf("provider callback: enable seen %v, disable seen %v; want both", p.sawEnable, p.sawDisable)
	}
	if !p.written {
		final = "TriggerMethod was never compiled: no events written"
	} else if !reflect.DeepEqual(p.counts, want) {
		final = fmt.Sprintf("events delivered %v, want %v", p.counts, want)
	}
	check.Done(final, callbacks)
	return nil
}

func init() {
	profiler.Register("{2726B5B4-3F88-462D-AEC0-4EFDC8D7B921}", &eventpipe{})
}

func main() {}
