package profiler

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/clrprof/clrprof/internal/chain"
)

// A Composite runs several profilers in one library: Compose makes one,
// and Register (or RegisterFactory) takes it like any other profiler.
//
// Each member gets an Info of its own at Initialize. Its SetEventMask and
// SetEventMask2 set that member's mask; the runtime runs with the union of
// all members' masks (and of a chained native profiler's, see WithChain),
// GetEventMask and GetEventMask2 answer the member's own, and a member
// receives a callback only when it implements it and its own mask asks for
// the callback's events: each member sees exactly the events it asked for.
//
// Rules:
//
//   - Order: every callback goes to the members in the order given to
//     Compose, Shutdown included.
//   - Answers: a callback that answers a bool (JITInlining,
//     JITCachedFunctionSearchStarted, LoadAsNotificationOnly) answers the
//     AND of the answers of the members that got it: a JITInlining "no" from
//     any member wins. With no member to ask, the answer is true. A member
//     that fails or panics has no vote; the callback fails only when no
//     member answered (the runtime ignores the answer of a failed
//     callback: a failing member must not silence another's "no").
//   - Errors and panics: every member is called whatever the others did; a
//     panic is recovered and logged with the member's type; the runtime sees
//     the first member's error (a panic is E_FAIL).
//   - Initialize: a member whose Initialize fails (or panics) is dropped
//     (its events cleared, no more callbacks), the others run. The
//     composite fails only when every member fails.
//   - IL: members that rewrite the same method at JITCompilationStarted
//     apply one after the other: the second one's GetILFunctionBody returns
//     the body the first one set (the runtime keeps the new body), so it
//     rewrites the first one's result (TestComposeTwoGoProfilers checks
//     this on every runtime). ReJIT is not merged: the runtime asks
//     GetReJITParameters once per method, every member that implements it
//     gets the same function control in order, and the last body set
//     wins; let one member own the ReJIT of a method.
//   - Enter/leave hooks (elt.NewRecorder, SetEnterLeaveFunctionHooks*) and the
//     function ID mapper: the runtime has one set per process; the first
//     member to set them owns them, another member's call fails with
//     CORPROF_E_PROFILER_ALREADY_ACTIVE and a log record naming both.
//
// A member may itself be any Callback (a sample's profiler type, say); it
// must not be a Composite.
//
// Several profiler objects (a library listed more than once in
// CORECLR_NOTIFICATION_PROFILERS, or attached after start-up): the
// per-member Infos and masks belong to the first object that initializes
// the Composite. With Register, every object dispatches to the same
// Composite: later objects initialize the members again with their own
// Info (shared by the members), and callbacks from every object are
// filtered by the members' first masks. With RegisterFactory each object
// gets a Composite of its own; those of later objects have members without
// an Info of their own (logged), which share their object's mask and get
// every callback they implement.
type Composite struct {
	members []member
	// started is set by the first Initialize: the members' Infos and
	// masks belong to that profiler object.
	started atomic.Bool
}

var _ Callback11 = (*Composite)(nil)

type member struct {
	impl        Callback
	cbs         callbacks
	implemented []bool
	name        string
	party       int // its Info wrapper (internal/chain), or -1: no wrapper, no filter
	info        *Info
	off         atomic.Bool // failed Initialize
}

// Compose returns a profiler that runs every member (see Composite). It
// returns an error for no member, a nil member, a Composite among them, or
// more members than the SDK has room for (16).
func Compose(members ...Callback) (*Composite, error) {
	if len(members) == 0 {
		return nil, errors.New("clrprof: Compose: no member")
	}
	if len(members) > chain.MaxMembers {
		return nil, fmt.Errorf("clrprof: Compose: %d members, at most %d", len(members), chain.MaxMembers)
	}
	c := &Composite{members: make([]member, len(members))}
	for i, m := range members {
		if err := checkImpl("Compose", m); err != nil {
			return nil, fmt.Errorf("%w (member %d)", err, i)
		}
		if _, ok := m.(*Composite); ok {
			return nil, fmt.Errorf("clrprof: Compose: member %d is a Composite; list its members instead", i)
		}
		impl, warnings := implementedSlots(m)
		for _, w := range warnings {
			logger().Warn(w, "member", i)
		}
		c.members[i] = member{impl: m, implemented: impl, name: fmt.Sprintf("#%d %T", i, m), party: -1}
		c.members[i].cbs.bind(m)
	}
	return c, nil
}

// Members returns the composed profilers, in order.
func (c *Composite) Members() []Callback {
	out := make([]Callback, len(c.members))
	for i := range c.members {
		out[i] = c.members[i].impl
	}
	return out
}

// implementedSlots of a Composite: the union of its members'.
func (c *Composite) implementedSlots() []bool {
	u := make([]bool, len(callbackMethods))
	for i := range c.members {
		for s, on := range c.members[i].implemented {
			u[s] = u[s] || on
		}
	}
	return u
}

// deliver reports whether member i gets the callback at slot.
func (c *Composite) deliver(i, slot int) bool {
	m := &c.members[i]
	if m.off.Load() || !m.implemented[slot] {
		return false
	}
	if m.party < 0 {
		return true
	}
	return chain.Wants(m.party, slot)
}

// recoverMember is deferred around each member's callback.
func (c *Composite) recoverMember(i int, method string, err *error) {
	if r := recover(); r != nil {
		reportPanic(method+" of composed profiler "+c.members[i].name, r, debug.Stack())
		if *err == nil {
			*err = E_FAIL
		}
	}
}

// fail records a member's error: the first one is the callback's.
func (c *Composite) fail(i int, method string, e error, err *error) {
	logger().Debug("composed profiler returned an error", "member", c.members[i].name, "callback", method, "err", e)
	if *err == nil {
		*err = e
	}
}

// each calls fn for every member that gets the callback at slot.
func (c *Composite) each(slot int, method string, fn func(m *member) error) (err error) {
	for i := range c.members {
		m := &c.members[i]
		if !c.deliver(i, slot) {
			continue
		}
		func() {
			defer c.recoverMember(i, method, &err)
			if e := fn(m); e != nil {
				c.fail(i, method, e, &err)
			}
		}()
	}
	return err
}

// start runs Initialize or InitializeForAttach of every member, each with
// an Info of its own.
func (c *Composite) start(method string, info *Info, call func(m *member, info *Info) error) error {
	var unk unsafe.Pointer
	if info != nil {
		unk = info.p[1]
	}
	if c.started.Swap(true) {
		// Another profiler object of this library dispatching to the same
		// Composite (Register: every object shares the value): the members
		// are initialized for it with its Info, shared by all of them, and
		// keep the Infos, masks and filters of the first object.
		logger().Info(method + ": composed profilers initialized again for another profiler object; their per-member event masks are the first object's (use RegisterFactory for a Composite per object)")
		var first error
		for i := range c.members {
			m := &c.members[i]
			if m.off.Load() {
				continue
			}
			if err := callUser(method+" of composed profiler "+m.name, func() error { return call(m, info) }); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	var errs []string
	var first error
	ok := 0
	for i := range c.members {
		m := &c.members[i]
		m.info = info
		m.party = -1
		if unk != nil {
			if w := chain.PartyInfo(unk, chain.PartyMember0+i); w != nil {
				if mi, err := newInfo(w); err == nil {
					m.info, m.party = mi, chain.PartyMember0+i
				}
			}
		}
		if info.NotificationOnly() && m.info != info {
			m.info.state.notif.Store(true)
		}
		if m.party < 0 && unk != nil {
			logger().Warn(method+": no Info of its own for a composed profiler (the per-member masks belong to the process's first profiler object; this is another: a second entry of the notification list, or an attach); it shares this object's event mask with the other members and gets every callback it implements",
				"member", m.name)
		}
		err := callUser(method+" of composed profiler "+m.name, func() error { return call(m, m.info) })
		if err != nil {
			m.off.Store(true)
			if m.party >= 0 {
				chain.PartyReset(m.party)
			}
			errs = append(errs, m.name+": "+err.Error())
			if first == nil {
				first = err
			}
			continue
		}
		ok++
	}
	if ok == 0 {
		return first
	}
	if len(errs) > 0 {
		logger().Error(method+": composed profilers failed and are dropped; the others run", "failed", strings.Join(errs, "; "))
	}
	return nil
}

// Initialize initializes every member (see Composite).
func (c *Composite) Initialize(info *Info) error {
	return c.start("Initialize", info, func(m *member, info *Info) error { return m.cbs.cb1.Initialize(info) })
}

// InitializeForAttach initializes every member that implements it; the
// others are dropped.
func (c *Composite) InitializeForAttach(info *Info, clientData []byte) error {
	slot := slotOf("InitializeForAttach")
	return c.start("InitializeForAttach", info, func(m *member, info *Info) error {
		if m.cbs.cb3 == nil || slot < 0 || !m.implemented[slot] {
			return CORPROF_E_PROFILER_NOT_ATTACHABLE
		}
		return m.cbs.cb3.InitializeForAttach(info, clientData)
	})
}

// Shutdown shuts every member down, in order.
func (c *Composite) Shutdown() error {
	return c.each(slotOf("Shutdown"), "Shutdown", func(m *member) error { return m.cbs.cb1.Shutdown() })
}

// ProfilerDetachSucceeded tells the members that implement it.
func (c *Composite) ProfilerDetachSucceeded() error {
	return c.each(slotOf("ProfilerDetachSucceeded"), "ProfilerDetachSucceeded", func(m *member) error {
		if m.cbs.cb3 == nil {
			return nil
		}
		return m.cbs.cb3.ProfilerDetachSucceeded()
	})
}

// ModuleUnloadStarted drops the module's cached metadata of every member's
// Info, then tells the members that implement it.
func (c *Composite) ModuleUnloadStarted(id ModuleID) error {
	for i := range c.members {
		if x := c.members[i].info; x != nil {
			cacheOf(x).drop(id)
			canonOf(x).moduleUnloading(id)
		}
	}
	return c.each(slotOf("ModuleUnloadStarted"), "ModuleUnloadStarted", func(m *member) error { return m.cbs.cb1.ModuleUnloadStarted(id) })
}

// ClassLoadFinished records canonical instantiations for every member's
// Info, then tells the members that implement it.
func (c *Composite) ClassLoadFinished(id ClassID, hr HRESULT) error {
	for i := range c.members {
		if x := c.members[i].info; x != nil && hr >= 0 {
			x.classLoaded(id)
		}
	}
	return c.each(slotOf("ClassLoadFinished"), "ClassLoadFinished", func(m *member) error { return m.cbs.cb1.ClassLoadFinished(id, hr) })
}

// ClassUnloadStarted forgets canonical instantiations for every member's
// Info, then tells the members that implement it.
func (c *Composite) ClassUnloadStarted(id ClassID) error {
	for i := range c.members {
		if x := c.members[i].info; x != nil {
			canonOf(x).classUnloading(id)
		}
	}
	return c.each(slotOf("ClassUnloadStarted"), "ClassUnloadStarted", func(m *member) error { return m.cbs.cb1.ClassUnloadStarted(id) })
}

// Released tells the members that implement Releaser.
func (c *Composite) Released() {
	for i := range c.members {
		if r, ok := c.members[i].impl.(Releaser); ok {
			func() {
				defer func() {
					if p := recover(); p != nil {
						reportPanic("Released of composed profiler "+c.members[i].name, p, debug.Stack())
					}
				}()
				r.Released()
			}()
		}
	}
}

// partiesQuiesce clears every party's mutable events at Shutdown when the
// Info wrappers are in use (chain or Compose) for x's profiler object;
// false when they are not.
func partiesQuiesce(x *Info) bool {
	return x != nil && chain.PartiesQuiesce(x.p[1])
}
