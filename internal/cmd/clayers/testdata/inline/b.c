void clrprof_a(void);
void clrprof_b_slow(void) { clrprof_a(); }
