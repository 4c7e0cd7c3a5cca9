#include "../circle/private.h"

void clrprof_x(void) {}
