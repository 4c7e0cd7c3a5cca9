// Call counting (eltcount.c): per-function call counts and inclusive
// ticks from the ELT hooks, without rings.
#ifndef CLRPROF_ELTCOUNT_H
#define CLRPROF_ELTCOUNT_H

#include <stdint.h>

#pragma GCC visibility push(hidden)

#define CLRPROF_CNT_MAX_FUNCS (1u << 22)
void clrprof_cnt_enter3(uint64_t id);
void clrprof_cnt_leave3(uint64_t id);
void clrprof_cnt_tailcall3(uint64_t id);
int clrprof_cnt_hook(uint64_t id, uint64_t kind, uint64_t sp);
void clrprof_cnt_slow(uint64_t id, uint64_t kind);
int clrprof_cnt_setup(uint64_t stack_frames, void *info);
void *clrprof_cnt_mapper2(void);
void *clrprof_cnt_mapper1(void);
void *clrprof_cnt_hookaddr(int which);
uint64_t clrprof_cnt_functions(void);
void clrprof_cnt_snapshot(uint64_t n, uint64_t *fids, uint64_t *calls, uint64_t *ticks);
void clrprof_cnt_stats(uint64_t *out);
uint64_t clrprof_cnt_stacks(uint64_t max, uint64_t frames, uint64_t *tids, uint64_t *fids);

#pragma GCC visibility pop

#endif
