package profiler

import "iter"

// The runtime's enumerators (ICorProfilerObjectEnum, ...FunctionEnum,
// ...ModuleEnum, ...MethodEnum, ...ThreadEnum) hand out their items in
// batches: Next returns up to 32 at a time, and an empty slice with a nil
// error at the end. All turns that into a Go iterator and Collect into a
// slice; neither releases the enumerator (defer its Release).
//
//	e, err := info.EnumModules()
//	if err != nil { ... }
//	defer e.Release()
//	for m, err := range e.All() {
//		if err != nil { ... }
//		...
//	}

// batches yields the items of next's batches until an empty one.
func batches[T any](next func() ([]T, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for n := 0; n < 1<<24; n++ {
			batch, err := next()
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			if len(batch) == 0 {
				return
			}
			for _, v := range batch {
				if !yield(v, nil) {
					return
				}
			}
		}
	}
}

// collect runs an iterator to its end; on an error it returns the items
// before it with the error.
func collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var out []T
	for v, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

// All iterates over the objects the enumerator has not handed out yet, in
// the runtime's order. An error ends the iteration: it is yielded with a
// zero ObjectID. It does not release the enumerator.
func (x *ObjectEnum) All() iter.Seq2[ObjectID, error] { return batches(x.Next) }

// Collect returns the objects the enumerator has not handed out yet; on an
// error, those before it with the error.
func (x *ObjectEnum) Collect() ([]ObjectID, error) { return collect(x.All()) }

// All iterates over the functions (and their ReJIT IDs) the enumerator has
// not handed out yet. An error ends the iteration: it is yielded with a
// zero Function. It does not release the enumerator.
func (x *FunctionEnum) All() iter.Seq2[Function, error] { return batches(x.Next) }

// Collect returns the functions the enumerator has not handed out yet; on
// an error, those before it with the error.
func (x *FunctionEnum) Collect() ([]Function, error) { return collect(x.All()) }

// All iterates over the modules the enumerator has not handed out yet. An
// error ends the iteration: it is yielded with a zero ModuleID. It does
// not release the enumerator.
func (x *ModuleEnum) All() iter.Seq2[ModuleID, error] { return batches(x.Next) }

// Collect returns the modules the enumerator has not handed out yet; on an
// error, those before it with the error.
func (x *ModuleEnum) Collect() ([]ModuleID, error) { return collect(x.All()) }

// All iterates over the methods (module and MethodDef token) the
// enumerator has not handed out yet. An error ends the iteration: it is
// yielded with a zero Method. It does not release the enumerator.
func (x *MethodEnum) All() iter.Seq2[Method, error] { return batches(x.Next) }

// Collect returns the methods the enumerator has not handed out yet; on an
// error, those before it with the error.
func (x *MethodEnum) Collect() ([]Method, error) { return collect(x.All()) }

// All iterates over the managed threads the enumerator has not handed out
// yet. An error ends the iteration: it is yielded with a zero ThreadID. It
// does not release the enumerator.
func (x *ThreadEnum) All() iter.Seq2[ThreadID, error] { return batches(x.Next) }

// Collect returns the threads the enumerator has not handed out yet; on an
// error, those before it with the error.
func (x *ThreadEnum) Collect() ([]ThreadID, error) { return collect(x.All()) }
