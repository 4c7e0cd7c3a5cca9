// Heap and object inspection with runtime callbacks; see heap.go.
#ifndef CLRPROF_HEAP_H
#define CLRPROF_HEAP_H

#include <stdint.h>

#pragma GCC visibility push(hidden)

// clrprof_object_refs calls ICorProfilerInfo10::EnumerateObjectReferences
// on info and stores up to max references of obj in refs; *n gets the
// number of references the object has (which may exceed max: the caller
// then asks again with a larger buffer). Returns the HRESULT.
int32_t clrprof_object_refs(void *info, uintptr_t obj, uintptr_t *refs, int max, int *n);

// clrprof_heap_walk calls ICorProfilerInfo15::EnumerateGCHeapObjects on
// info with a callback into Go per object (clrprofGoHeapObject with
// handle h).
int32_t clrprof_heap_walk(void *info, uintptr_t h);

#pragma GCC visibility pop

#endif
