package profiler

import "testing"

// TestInfoStateIsPerInfo: what the SDK keeps per Info (infostate.go) is
// the Info's own, starts empty and usable, and a nil Info gets a fresh
// empty value rather than a shared one.
func TestInfoStateIsPerInfo(t *testing.T) {
	x, y := &Info{}, &Info{}
	x.state.notif.Store(true)
	if !x.NotificationOnly() || y.NotificationOnly() {
		t.Errorf("NotificationOnly: x %v (want true), y %v (want false)", x.NotificationOnly(), y.NotificationOnly())
	}
	if err := y.checkNotification("RequestReJIT"); err != nil {
		t.Errorf("a main profiler's Info refused a call: %v", err)
	}
	if err := x.checkNotification("RequestReJIT"); err == nil {
		t.Error("a notification profiler's Info allowed RequestReJIT")
	}
	if cacheOf(x) == cacheOf(y) || canonOf(x) == canonOf(y) {
		t.Error("two Infos share a cache")
	}
	if c1, c2 := cacheOf(nil), cacheOf(nil); c1 == c2 {
		t.Error("nil Infos share an import cache")
	}
	if r1, r2 := canonOf(nil), canonOf(nil); r1 == r2 {
		t.Error("nil Infos share a canonical registry")
	}
	// The zero canonical registry takes unloads and being switched on and
	// off (its maps are made when first needed).
	r := canonOf(x)
	r.classUnloading(1)
	r.moduleUnloading(2)
	r.setWatched(true)
	r.classUnloading(1)
	dropCanon(x)
	if r.watched || r.canon != 0 || len(r.byType) != 0 {
		t.Errorf("after dropCanon: watched %v, canon %#x, %d types", r.watched, uint64(r.canon), len(r.byType))
	}
	// NotificationOnly of a nil Info is false.
	var z *Info
	if z.NotificationOnly() {
		t.Error("nil Info: NotificationOnly")
	}
}
