// The heap walk recorded in C: ObjectReferences answered without entering
// Go while a recording is on; see heapwalk.go.
#ifndef CLRPROF_HEAPWALK_H
#define CLRPROF_HEAPWALK_H

#include <stdint.h>

#pragma GCC visibility push(hidden)

// clrprof_heapwalk_install takes over the ObjectReferences slot (call it
// before the runtime can deliver the callback); info is an
// ICorProfilerInfo4 for GetObjectSize2. Returns 0, or -1.
int clrprof_heapwalk_install(void *info);

// clrprof_heapwalk_start starts recording (the callback's objects go to
// the buffer instead of Go) with room for at most max objects; stop ends
// it. While off, the callback goes to Go as before.
void clrprof_heapwalk_start(uint64_t max);
void clrprof_heapwalk_stop(void);

// What a recording holds: words (objects as [id, class, size, n, ref...]),
// the number of objects, whether more than max came (then the buffer is
// freed and nothing is kept), the first failed GetObjectSize2's HRESULT
// and its object (0 if none), and whether the buffer could not grow.
typedef struct {
	uint64_t *words;
	uint64_t nwords;
	uint64_t objects;
	int overflow;
	int nomem;
	int32_t size_hr;
	uint64_t size_obj;
} clrprof_heapwalk_result;

void clrprof_heapwalk_result_get(clrprof_heapwalk_result *out);

// clrprof_heapwalk_reset frees the buffer.
void clrprof_heapwalk_reset(void);

// clrprof_heapwalk_pass_to_go sets whether the callback goes on to Go
// while no recording is on (default 1).
void clrprof_heapwalk_pass_to_go(int on);

#pragma GCC visibility pop

#endif
