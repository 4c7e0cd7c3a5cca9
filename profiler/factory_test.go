package profiler

import (
	"strings"
	"testing"
)

type counted struct {
	Base
	n int
}

// RegisterFactory gives the first profiler object the value it probed and
// every later one a fresh value from the factory; a value of another type,
// a nil value and a panicking factory refuse the object instead of
// dispatching to the wrong thing.
func TestRegisterFactory(t *testing.T) {
	resetRegistration(t)
	captureLog(t)
	calls := 0
	var next Callback
	err := RegisterFactory(testCLSID, func() Callback {
		calls++
		if next != nil {
			return next
		}
		return &counted{n: calls}
	})
	if err != nil {
		t.Fatal(err)
	}
	r := registered.Load()
	d1, err := newDispatcher(r)
	if err != nil || d1.impl.(*counted).n != 1 || calls != 1 {
		t.Fatalf("first object: %v, value %+v, %d factory calls; want the probed value and 1 call", err, d1, calls)
	}
	d2, err := newDispatcher(r)
	if err != nil || d2.impl.(*counted).n != 2 || calls != 2 {
		t.Fatalf("second object: %v, %d factory calls; want a fresh value", err, calls)
	}
	if d1.impl == d2.impl {
		t.Fatal("two objects share one value")
	}
	for _, c := range []struct {
		next Callback
		want string
	}{
		{onlyBase{}, "every value must have one type"},
		{(*counted)(nil), "nil *profiler.counted"},
	} {
		next = c.next
		if _, err := newDispatcher(r); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("factory returning %T: %v, want %q", c.next, err, c.want)
		}
	}
	r.newImpl = func() Callback { panic("boom") }
	if _, err := newDispatcher(r); err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Errorf("panicking factory: %v", err)
	}
	resetRegistration(t)
	if err := RegisterFactory(testCLSID, nil); err == nil {
		t.Error("RegisterFactory accepted a nil factory")
	}
}

// The callback table is switched off only when the last live object is
// done.
func TestRetireLastObject(t *testing.T) {
	liveObjects.Store(0)
	a, b := &dispatcher{}, &dispatcher{}
	for _, d := range []*dispatcher{a, b} {
		d.live.Store(true)
		liveObjects.Add(1)
	}
	if a.retire() {
		t.Error("the first of two objects retired as the last")
	}
	if a.retire() {
		t.Error("retiring twice counted twice")
	}
	if !b.retire() {
		t.Error("the second object did not retire as the last")
	}
	if liveObjects.Load() != 0 {
		t.Errorf("liveObjects = %d after both retired", liveObjects.Load())
	}
}
