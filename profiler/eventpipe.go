package profiler

/*
#include <stdlib.h>
#include <string.h>
#include "corprof_gen.h"

void *clrprof_ep_provider_callback(int slot);
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"unicode/utf16"
	"unsafe"

	"github.com/clrprof/clrprof/internal/cgoutil"

	"github.com/google/uuid"
)

// EventPipeProviderSettings says which events of one provider an EventPipe
// session receives: its events whose keywords intersect Keywords (0 means
// every event of the provider) at Level or below.
type EventPipeProviderSettings struct {
	// Name is the provider's name, e.g. "Microsoft-Windows-DotNETRuntime"
	// (clrevents.RuntimeProvider) or an EventSource's name.
	Name     string
	Keywords uint64
	Level    EventPipeLevel
	// Filter holds key=value arguments passed to the provider's enable
	// callback (an EventSource's OnEventCommand sees them as arguments);
	// nil for none.
	Filter map[string]string
}

// filterString renders the filter as EventPipe takes it: "k1=v1;k2=v2",
// keys sorted, with a key or value that holds '=', ';' or '"' quoted.
func (p EventPipeProviderSettings) filterString() string {
	if len(p.Filter) == 0 {
		return ""
	}
	keys := make([]string, 0, len(p.Filter))
	for k := range p.Filter {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	quote := func(s string) string {
		if strings.ContainsAny(s, "=;\"") {
			return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
		}
		return s
	}
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(quote(k) + "=" + quote(p.Filter[k]))
	}
	return b.String()
}

// cMem collects C allocations freed together after a call.
type cMem []unsafe.Pointer

func (m *cMem) alloc(n int) unsafe.Pointer {
	p := C.calloc(C.size_t(max(n, 1)), 1)
	if p == nil {
		panic("clrprof: out of C memory")
	}
	*m = append(*m, p)
	return p
}

// utf16z copies s, NUL-terminated, into C memory.
func (m *cMem) utf16z(s string) *C.WCHAR {
	u := utf16.Encode([]rune(s))
	p := m.alloc(2 * (len(u) + 1))
	dst := unsafe.Slice((*uint16)(p), len(u)+1)
	copy(dst, u)
	return (*C.WCHAR)(p)
}

func (m *cMem) free() {
	for _, p := range *m {
		C.free(p)
	}
	*m = nil
}

func (m *cMem) providerConfig(cfg *C.COR_PRF_EVENTPIPE_PROVIDER_CONFIG, p EventPipeProviderSettings) error {
	if p.Name == "" {
		return errors.New("clrprof: EventPipe provider settings without a Name")
	}
	if p.Level > EventPipeVerbose {
		return fmt.Errorf("clrprof: EventPipe provider %q: level %d: want EventPipeLogAlways..EventPipeVerbose", p.Name, p.Level)
	}
	cfg.providerName = m.utf16z(p.Name)
	cfg.keywords = C.UINT64(p.Keywords)
	cfg.loggingLevel = C.UINT32(p.Level)
	if f := p.filterString(); f != "" {
		cfg.filterData = m.utf16z(f)
	}
	return nil
}

// EventPipeStartSession starts an in-process EventPipe session
// (ICorProfilerInfo12, .NET 5 and later; on older runtimes the error
// matches ErrNotAvailable) receiving the events of the given providers.
// The runtime delivers each event to the profiler's
// EventPipeEventDelivered (ICorProfilerCallback10), on the thread that
// raised it, provided the event mask has HighEventPipe; decode
// the payloads with package clrevents. With requestRundown the runtime
// also sends its rundown events when the session stops. Stop it with
// EventPipeStopSession.
func (x *Info) EventPipeStartSession(providers []EventPipeProviderSettings, requestRundown bool) (EventPipeSession, error) {
	if len(providers) == 0 {
		return 0, errors.New("clrprof: EventPipeStartSession: no providers")
	}
	var m cMem
	defer m.free()
	size := int(unsafe.Sizeof(C.COR_PRF_EVENTPIPE_PROVIDER_CONFIG{}))
	arr := m.alloc(size * len(providers))
	cfgs := unsafe.Slice((*C.COR_PRF_EVENTPIPE_PROVIDER_CONFIG)(arr), len(providers))
	for i, p := range providers {
		if err := m.providerConfig(&cfgs[i], p); err != nil {
			return 0, err
		}
	}
	return x.eventPipeStartSession(uint32(len(providers)), arr, requestRundown)
}

// EventPipeAddProviderToSession adds a provider to a running session
// (ICorProfilerInfo12, .NET 5 and later). The runtime adds it to the
// session's list, which it consults when a provider is created: a provider
// created after the call (an EventSource the application constructs later)
// delivers its events to the session, with the filter arguments; one that
// already exists, such as the runtime's own, is not enabled this way (on
// .NET 8.0.4 it delivered nothing): name it in EventPipeStartSession.
func (x *Info) EventPipeAddProviderToSession(session EventPipeSession, provider EventPipeProviderSettings) error {
	var m cMem
	defer m.free()
	cfg := (*C.COR_PRF_EVENTPIPE_PROVIDER_CONFIG)(m.alloc(int(unsafe.Sizeof(C.COR_PRF_EVENTPIPE_PROVIDER_CONFIG{}))))
	if err := m.providerConfig(cfg, provider); err != nil {
		return err
	}
	return x.eventPipeAddProviderToSession(session, unsafe.Pointer(cfg))
}

// EventPipeParam describes one parameter of an event defined with
// EventPipeDefineEvent.
type EventPipeParam struct {
	// Name is the field's name.
	Name string
	// Type is the field's type.
	Type EventPipeParamType
	// ElementType is the type of an array's elements (Type ==
	// EventPipeArray; the payload holds a UInt16 count, then the elements).
	ElementType EventPipeParamType
}

// EventPipeEventDefinition describes an event of a provider created with
// EventPipeCreateProvider.
type EventPipeEventDefinition struct {
	// Name is the event's name.
	Name string
	// ID is the event's ID within its provider.
	ID uint32
	// Keywords are the keyword bits a session enables the event with.
	Keywords uint64
	// Version is the event's version.
	Version uint32
	// Level is the event's level.
	Level EventPipeLevel
	// Opcode is the event's opcode (0 for info).
	Opcode    uint8
	NeedStack bool // the runtime takes the writing thread's stack with each event
	// Params describe the payload's fields, in order.
	Params []EventPipeParam
}

// EventPipeDefineEvent defines an event of a provider the profiler created
// (EventPipeCreateProvider; ICorProfilerInfo12, .NET 5 and later). Write
// it with EventPipeWriteEvent.
func (x *Info) EventPipeDefineEvent(provider EventPipeProvider, def EventPipeEventDefinition) (EventPipeEvent, error) {
	if def.Name == "" {
		return 0, errors.New("clrprof: EventPipeDefineEvent: the event has no Name")
	}
	var m cMem
	defer m.free()
	var arr unsafe.Pointer
	if len(def.Params) > 0 {
		arr = m.alloc(int(unsafe.Sizeof(C.COR_PRF_EVENTPIPE_PARAM_DESC{})) * len(def.Params))
		descs := unsafe.Slice((*C.COR_PRF_EVENTPIPE_PARAM_DESC)(arr), len(def.Params))
		for i, p := range def.Params {
			if p.Name == "" {
				return 0, fmt.Errorf("clrprof: EventPipeDefineEvent %q: parameter %d has no Name", def.Name, i)
			}
			if (p.Type == EventPipeArray) != (p.ElementType != 0) {
				return 0, fmt.Errorf("clrprof: EventPipeDefineEvent %q: parameter %q: an ElementType goes with EventPipeArray, and only with it", def.Name, p.Name)
			}
			descs[i]._type = C.UINT32(p.Type)
			descs[i].elementType = C.UINT32(p.ElementType)
			descs[i].name = m.utf16z(p.Name)
		}
	}
	return x.eventPipeDefineEvent(provider, def.Name, def.ID, def.Keywords, def.Version, uint32(def.Level), def.Opcode, def.NeedStack, uint32(len(def.Params)), arr)
}

// EventPipeWriteEvent writes an event defined with EventPipeDefineEvent
// (ICorProfilerInfo12, .NET 5 and later). payload holds the event's
// parameters in order, laid out as EventPipe reads them (build it with
// clrevents.Payload); nil for an event without parameters. The IDs are the
// activity and related activity (the zero UUID for none). The runtime
// copies the payload before it returns.
func (x *Info) EventPipeWriteEvent(event EventPipeEvent, payload []byte, activityID, relatedActivityID uuid.UUID) error {
	if len(payload) > 1<<20 {
		return fmt.Errorf("clrprof: EventPipeWriteEvent: a payload of %d bytes (at most 1 MiB)", len(payload))
	}
	if len(payload) == 0 {
		return x.eventPipeWriteEvent(event, 0, nil, activityID, relatedActivityID)
	}
	var m cMem
	defer m.free()
	buf := m.alloc(len(payload))
	C.memcpy(buf, unsafe.Pointer(&payload[0]), C.size_t(len(payload)))
	d := (*C.COR_PRF_EVENT_DATA)(m.alloc(int(unsafe.Sizeof(C.COR_PRF_EVENT_DATA{}))))
	d.ptr = C.UINT64(uintptr(buf))
	d.size = C.UINT32(len(payload))
	return x.eventPipeWriteEvent(event, 1, unsafe.Pointer(d), activityID, relatedActivityID)
}

// EventPipeProviderChange is what the runtime tells a provider created with
// EventPipeCreateProvider2 when a session enables or disables it.
type EventPipeProviderChange struct {
	// Enabled is true when a session enabled the provider, false when
	// the last one disabled it.
	Enabled bool
	// Level is the most verbose level enabled.
	Level EventPipeLevel
	// MatchAnyKeywords enables the events with any of these keyword bits.
	MatchAnyKeywords uint64
	// MatchAllKeywords restricts them to those with all of these bits.
	MatchAllKeywords uint64
	// SourceID is the ID of the session's source (the zero UUID if the
	// runtime gave none).
	SourceID uuid.UUID
	// Filter is the filter data (the session's filter arguments for this
	// provider, as the runtime encodes them) and FilterType its type; nil
	// when there is none.
	Filter     []byte
	FilterType uint32
}

// eventPipeCallbacks are the Go callbacks of the providers created with
// EventPipeCreateProvider2, by trampoline slot.
var eventPipeCallbacks struct {
	mu  sync.Mutex
	fns [8]func(EventPipeProviderChange)
}

// EventPipeCreateProvider2 creates a provider, as EventPipeCreateProvider,
// whose callback fn the runtime calls whenever a session enables or
// disables it (ICorProfilerInfo14: .NET 8 and later; on older runtimes
// the error matches ErrNotAvailable). fn runs on the thread that changed
// the session (inside EventPipeStartSession or EventPipeStopSession when
// the profiler did it), must not block, and must not start or stop a
// session. At most 8 providers per process have a callback.
func (x *Info) EventPipeCreateProvider2(name string, fn func(EventPipeProviderChange)) (EventPipeProvider, error) {
	if fn == nil {
		return 0, errors.New("clrprof: EventPipeCreateProvider2: nil callback (use EventPipeCreateProvider)")
	}
	if x.ptr(14) == nil {
		return 0, notAvailable("ICorProfilerInfo14::EventPipeCreateProvider2", 14, x.Version())
	}
	cb := &eventPipeCallbacks
	cb.mu.Lock()
	slot := -1
	for i, f := range cb.fns {
		if f == nil {
			slot = i
			break
		}
	}
	if slot < 0 {
		cb.mu.Unlock()
		return 0, errors.New("clrprof: EventPipeCreateProvider2: 8 providers with callbacks already")
	}
	cb.fns[slot] = fn
	cb.mu.Unlock()
	p, err := x.eventPipeCreateProvider2(name, C.clrprof_ep_provider_callback(C.int(slot)))
	if err != nil {
		cb.mu.Lock()
		cb.fns[slot] = nil
		cb.mu.Unlock()
	}
	return p, err
}

//export clrprofGoEventPipeProviderCallback
func clrprofGoEventPipeProviderCallback(slot C.int, sourceID *C.uint8_t, enabled C.uint32_t, level C.uint8_t, matchAny, matchAll C.uint64_t,
	filterPtr unsafe.Pointer, filterSize, filterType C.uint32_t) {
	defer func() {
		if r := recover(); r != nil {
			reportPanic("EventPipe provider callback", r, debug.Stack())
		}
	}()
	cb := &eventPipeCallbacks
	cb.mu.Lock()
	var fn func(EventPipeProviderChange)
	if slot >= 0 && int(slot) < len(cb.fns) {
		fn = cb.fns[slot]
	}
	cb.mu.Unlock()
	if fn == nil {
		return
	}
	ch := EventPipeProviderChange{
		Enabled:          enabled != 0,
		Level:            EventPipeLevel(level),
		MatchAnyKeywords: uint64(matchAny),
		MatchAllKeywords: uint64(matchAll),
		FilterType:       uint32(filterType),
	}
	if sourceID != nil {
		ch.SourceID = cgoutil.GUIDAt(unsafe.Pointer(sourceID))
	}
	if filterPtr != nil && filterSize > 0 && filterSize <= 1<<16 {
		ch.Filter = append([]byte(nil), unsafe.Slice((*byte)(filterPtr), int(filterSize))...)
	}
	fn(ch)
}
