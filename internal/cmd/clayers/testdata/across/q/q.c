void clrprof_p(void);
void clrprof_q(void) { clrprof_p(); }
