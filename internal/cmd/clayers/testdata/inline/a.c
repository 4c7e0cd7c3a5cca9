#include "b.h"
void clrprof_a(void) { clrprof_b_fast(); }
