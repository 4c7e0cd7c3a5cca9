void clrprof_b_slow(void);
static inline void clrprof_b_fast(void) { clrprof_b_slow(); }
