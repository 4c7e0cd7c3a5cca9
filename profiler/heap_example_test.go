package profiler_test

import (
	"fmt"
	"os"

	"github.com/clrprof/clrprof/profiler"
)

// heapInspector looks at the objects the garbage collector's heap walk
// reports after each collection (MonitorGC): the layout of their class,
// the shape of arrays, and what they reference.
type heapInspector struct {
	profiler.Base
	info *profiler.Info
}

func (p *heapInspector) Initialize(info *profiler.Info) error {
	p.info = info
	return info.SetEventMask(profiler.MonitorGC)
}

// ObjectReferences runs once per live object, with the runtime suspended:
// the ObjectID is valid for the whole callback.
func (p *heapInspector) ObjectReferences(obj profiler.ObjectID, class profiler.ClassID, refs []profiler.ObjectID) error {
	name, err := p.info.ClassName(class)
	if err != nil {
		return nil
	}
	if _, isArray, _ := p.info.IsArrayClass(class); isArray {
		if a, err := p.info.GetArrayObjectInfo(obj); err == nil && a.Len() > 1<<20 {
			fmt.Fprintf(os.Stderr, "%s: %v elements (lower bounds %v) at %v\n", name, a.Lengths, a.LowerBounds, a.Data)
		}
		return nil
	}
	if l, err := p.info.GetClassLayout(class); err == nil && len(l.Fields) > 50 {
		fmt.Fprintf(os.Stderr, "%s: %d fields in %d bytes, %d references\n", name, len(l.Fields), l.Size, len(refs))
	}
	return nil
}

// GetClassLayout and GetArrayObjectInfo inside the heap walk: report big
// arrays and classes with many fields.
func ExampleInfo_GetClassLayout() {
	if err := profiler.Register("{3E7B9A21-5C4D-4F8E-A1B2-6D0C9E8F7A53}", &heapInspector{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
}
