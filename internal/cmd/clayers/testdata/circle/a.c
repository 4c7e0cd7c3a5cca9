void clrprof_b(void);
void clrprof_a(void) { clrprof_b(); }
