void clrprof_q(void);
void clrprof_p(void) { clrprof_q(); }
