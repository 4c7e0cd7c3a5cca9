// Command profiler is the eventpipe_readevents scenario's profiler: it
// starts an EventPipe session on the app's EventSource (every keyword,
// Verbose) from Initialize, and reads the three events the app writes in
// EventPipeEventDelivered: each is named in its metadata, has the
// parameters (names and types) of its C# method and the values the app
// passed; the provider's name comes back from EventPipeGetProviderInfo, and
// EventPipeProviderCreated must have announced it. Exactly three events
// must be seen.
package main

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/clrprof/clrprof/clrevents"
	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/profiler"
	"github.com/google/uuid"
)

const sourceName = "EventPipeTestEventSource"

type readevents struct {
	profiler.Base
	info *profiler.Info

	mu      sync.Mutex
	names   map[profiler.EventPipeProvider]string
	events  int
	created bool // EventPipeProviderCreated named the app's EventSource
}

func (p *readevents) Initialize(info *profiler.Info) error {
	p.info = info
	p.names = map[profiler.EventPipeProvider]string{}
	if err := info.SetEventMask2(0, profiler.HighEventPipe); err != nil {
		check.Failf("SetEventMask2: %v", err)
		return err
	}
	_, err := info.EventPipeStartSession([]profiler.EventPipeProviderSettings{{Name: sourceName, Keywords: ^uint64(0), Level: profiler.EventPipeVerbose}}, false)
	if err != nil {
		check.Failf("EventPipeStartSession: %v", err)
		return err
	}
	check.Logf("started the EventPipe session")
	return nil
}

func (p *readevents) providerName(provider profiler.EventPipeProvider) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n, ok := p.names[provider]; ok {
		return n
	}
	n, err := p.info.EventPipeGetProviderInfo(provider)
	if err != nil {
		check.Failf("EventPipeGetProviderInfo: %v", err)
	}
	p.names[provider] = n
	return n
}

func (p *readevents) EventPipeProviderCreated(provider profiler.EventPipeProvider) error {
	name := p.providerName(provider)
	check.Logf("provider created: %s", name)
	if name == sourceName {
		p.mu.Lock()
		p.created = true
		p.mu.Unlock()
	}
	return nil
}

type want struct {
	types  []clrevents.TypeCode
	values []clrevents.Value
}

func (p *readevents) EventPipeEventDelivered(provider profiler.EventPipeProvider, eventID, eventVersion uint32, metadataBlob, eventData []byte,
	activityID, relatedActivityID uuid.UUID, thread profiler.ThreadID, stack []profiler.Address) error {
	if p.providerName(provider) != sourceName {
		return nil
	}
	md, err := clrevents.ParseMetadata(metadataBlob)
	if err != nil {
		check.Failf("event %d: metadata: %v", eventID, err)
		return nil
	}
	check.Logf("saw %s (id %d)", md.Name, eventID)
	ints := make([]any, 120)
	for i := range ints {
		ints[i] = int32(i)
	}
	var w want
	switch md.Name {
	case "MyEvent":
		w = want{[]clrevents.TypeCode{clrevents.TypeInt32}, []clrevents.Value{{Name: "i", Value: int32(12)}}}
	case "MyArrayEvent":
		w = want{[]clrevents.TypeCode{clrevents.TypeChar, clrevents.TypeArray, clrevents.TypeString}, []clrevents.Value{
			{Name: "ch", Value: 'd'}, {Name: "intArray", Value: ints}, {Name: "str", Value: "Hello from EventPipeTestEventSource!"}}}
	case "KeyValueEvent":
		w = want{[]clrevents.TypeCode{clrevents.TypeString, clrevents.TypeString, clrevents.TypeArray}, []clrevents.Value{
			{Name: "SourceName", Value: "Source"}, {Name: "EventName", Value: "Event"},
			{Name: "Arguments", Value: []any{[]clrevents.Value{{Name: "Key", Value: "samplekey"}, {Name: "Value", Value: "samplevalue"}}}}}}
	default:
		return nil // the EventSource's own manifest and command events
	}
	if len(md.Params) != len(w.types) {
		check.Failf("%s: %d parameters, want %d", md.Name, len(md.Params), len(w.types))
		return nil
	}
	for i, f := range md.Params {
		check.That(f.Type == w.types[i] && f.Name == w.values[i].Name, "%s: parameter %d is %q %v, want %q %v", md.Name, i, f.Name, f.Type, w.values[i].Name, w.types[i])
	}
	if md.Name == "MyArrayEvent" {
		e := md.Params[1].Elem
		check.That(e != nil && e.Type == clrevents.TypeInt32, "MyArrayEvent: intArray's elements are %+v, want Int32", e)
	}
	vals, err := clrevents.DecodeFields(md.Params, eventData)
	if err != nil {
		check.Failf("%s: payload: %v", md.Name, err)
		return nil
	}
	if !reflect.DeepEqual(vals, w.values) {
		check.Failf("%s: values %#v, want %#v", md.Name, vals, w.values)
		return nil
	}
	p.mu.Lock()
	p.events++
	p.mu.Unlock()
	return nil
}

func (p *readevents) Shutdown() error {
	p.mu.Lock()
	n, created := p.events, p.created
	p.mu.Unlock()
	final := ""
	if n != 3 {
		final = fmt.Sprintf("events validated: %d, want 3", n)
	}
	created2 := ""
	if !created {
		created2 = "EventPipeProviderCreated never named " + sourceName
	}
	check.Done(final, created2)
	return nil
}

func init() {
	profiler.Register("{9E7F78E2-B3BE-410B-AA8D-E210E4C757A4}", &readevents{})
}

func main() {}
