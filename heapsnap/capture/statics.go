package capture

import (
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

// A static field's storage. The runtime reports the arrays that hold
// static fields as objects reached from handles; naming the fields needs
// their addresses, which the profiling API gives per loaded class
// (GetAppDomainStaticAddress), and the classes loaded, which the Capturer
// records from ClassLoadFinished.
type staticSlot struct {
	addr profiler.Address
	name string
}

// ClassLoadFinished records a loaded class, whose static fields a
// snapshot then names.
func (c *Capturer) ClassLoadFinished(classID profiler.ClassID, status profiler.HRESULT) error {
	if status < 0 {
		return nil
	}
	c.mu.Lock()
	c.loaded = append(c.loaded, classID)
	c.mu.Unlock()
	return nil
}

// ClassUnloadStarted forgets a class (collectible assemblies).
func (c *Capturer) ClassUnloadStarted(classID profiler.ClassID) error {
	c.mu.Lock()
	c.unloaded[classID] = struct{}{}
	c.mu.Unlock()
	return nil
}

// isRef reports whether a field of type t holds an object reference
// (class, string, object, array, generic instance of a class). Type
// variables are not resolved and count as not.
func isRef(t *metadata.Type) bool {
	for t != nil && (t.Kind == metadata.ElementTypeCmodReqd || t.Kind == metadata.ElementTypeCmodOpt) {
		t = t.Elem
	}
	if t == nil {
		return false
	}
	switch t.Kind {
	case metadata.ElementTypeClass, metadata.ElementTypeString, metadata.ElementTypeObject,
		metadata.ElementTypeSzarray, metadata.ElementTypeArray:
		return true
	case metadata.ElementTypeGenericinst:
		return t.Elem != nil && t.Elem.Kind == metadata.ElementTypeClass
	}
	return false
}

// staticsStats counts what findStatics could not name.
type staticsStats struct {
	classes, fields, slots, notInitialized, failed int
	firstErr                                       error
}

// findStatics returns the storage of the reference-typed static fields of
// every class loaded so far whose static constructor has run.
func (c *Capturer) findStatics() ([]staticSlot, staticsStats) {
	var st staticsStats
	c.mu.Lock()
	classes := make([]profiler.ClassID, 0, len(c.loaded))
	for _, cls := range c.loaded {
		if _, gone := c.unloaded[cls]; !gone {
			classes = append(classes, cls)
		}
	}
	c.mu.Unlock()
	slices.Sort(classes)

	type modInfo struct {
		imp *metadata.Import2
		ad  profiler.AppDomainID
		err error
	}
	mods := map[profiler.ModuleID]*modInfo{}
	mod := func(m profiler.ModuleID) *modInfo {
		if mi := mods[m]; mi != nil {
			return mi
		}
		mi := &modInfo{}
		mods[m] = mi
		if mi.imp, mi.err = c.info.ModuleImport(m); mi.err != nil {
			return mi
		}
		info, err := c.info.GetModuleInfo(m)
		if err != nil {
			mi.err = err
			return mi
		}
		ai, err := c.info.GetAssemblyInfo(info.AssemblyID)
		if err != nil {
			mi.err = err
			return mi
		}
		mi.ad = ai.AppDomainID
		return mi
	}
	fail := func(err error) {
		st.failed++
		if st.firstErr == nil {
			st.firstErr = err
		}
	}
	var slots []staticSlot
	for _, cls := range classes {
		ci, err := c.info.GetClassIDInfo2(cls)
		if err != nil || ci.TypeDefToken == 0 {
			continue // arrays and the like have no fields
		}
		mi := mod(ci.ModuleID)
		if mi.err != nil {
			fail(mi.err)
			continue
		}
		st.classes++
		fields, err := mi.imp.Fields(ci.TypeDefToken)
		if err != nil {
			fail(err)
			continue
		}
		var typeName string
		for _, fd := range fields {
			f, err := mi.imp.Field(fd)
			if err != nil {
				fail(err)
				continue
			}
			if f.Flags&metadata.FdStatic == 0 || f.Flags&metadata.FdLiteral != 0 {
				continue
			}
			sig, err := metadata.ParseFieldSig(f.Sig)
			if err != nil || !isRef(sig.Type) {
				continue
			}
			st.fields++
			kind, err := c.info.GetStaticFieldInfo(cls, fd)
			if err != nil || kind&profiler.FieldAppDomainStatic == 0 {
				continue // thread statics and the like: not named
			}
			addr, err := c.info.GetAppDomainStaticAddress(cls, fd, mi.ad)
			if err != nil {
				if errors.Is(err, profiler.CORPROF_E_DATAINCOMPLETE) {
					st.notInitialized++
				} else {
					fail(err)
				}
				continue
			}
			if typeName == "" {
				if typeName, err = c.info.ClassName(cls); err != nil {
					typeName = fmt.Sprintf("<class %#x>", uint64(cls))
				}
			}
			slots = append(slots, staticSlot{addr: addr, name: typeName + "." + f.Name})
			st.slots++
		}
	}
	return slots, st
}

// load reads the object reference stored at a static field's address. It
// runs in GarbageCollectionFinished, while the runtime is suspended: the
// storage is the runtime's and stays where it is, and its content is
// the object's address after this collection.
func load(a profiler.Address) uint64 {
	return *(*uint64)(unsafe.Add(unsafe.Pointer(nil), uintptr(a)))
}
