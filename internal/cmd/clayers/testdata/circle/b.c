void clrprof_a(void);
void clrprof_b(void) { clrprof_a(); }
