#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "pinvoke.h"

int clrprof_instr_self(char *buf, int n) {
	Dl_info info;
	if (dladdr((const void *)&clrprof_instr_self, &info) == 0 || info.dli_fname == NULL) {
		return -1;
	}
	char *real = realpath(info.dli_fname, NULL);
	int w = snprintf(buf, (size_t)n, "%s", real != NULL ? real : info.dli_fname);
	free(real);
	return (w < 0 || w >= n) ? -1 : w;
}

static void *self_handle;

void *clrprof_instr_symbol(const char *name) {
	if (name == NULL) {
		return NULL;
	}
	void *h = __atomic_load_n(&self_handle, __ATOMIC_ACQUIRE);
	if (h == NULL) {
		Dl_info info;
		if (dladdr((const void *)&clrprof_instr_symbol, &info) == 0 || info.dli_fname == NULL) {
			return NULL;
		}
		// The library is loaded: RTLD_NOLOAD returns its handle without
		// loading anything (the reference it adds is never dropped: the
		// library is never unloaded).
		h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
		if (h == NULL) {
			return NULL;
		}
		__atomic_store_n(&self_handle, h, __ATOMIC_RELEASE);
	}
	return dlsym(h, name);
}
