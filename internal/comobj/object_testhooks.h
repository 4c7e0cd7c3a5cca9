// Test hooks of the profiler object (object_testhooks.c), defined in test
// builds only (build tag clrprof_testhooks).
#ifndef CLRPROF_OBJECT_TESTHOOKS_H
#define CLRPROF_OBJECT_TESTHOOKS_H

#include <stdint.h>

#include "corprof_gen.h"

#pragma GCC visibility push(hidden)

// Test hooks (object_testhooks.c), in test builds only.
void *clrprof_test_fake_info(int versions);
int clrprof_test_fake_refs(void *info);
void clrprof_test_free(void *p);
const GUID *clrprof_test_callback_iid(int i);
const GUID *clrprof_test_iid_iunknown(void);
HRESULT clrprof_test_create(const GUID *clsid, const GUID *iid, int aggregate, void **obj);
HRESULT clrprof_test_qi(void *obj, const GUID *iid, void **out);
ULONG clrprof_test_addref(void *obj);
ULONG clrprof_test_release(void *obj);
HRESULT clrprof_test_initialize(void *obj, void *info);
HRESULT clrprof_test_shutdown(void *obj);
HRESULT clrprof_test_jit_started(void *obj, uintptr_t fid);
HRESULT clrprof_test_module_loaded(void *obj, uintptr_t mid);
HRESULT clrprof_test_initialize_for_attach(void *obj, void *info, const void *data, unsigned n);

#pragma GCC visibility pop

#endif
