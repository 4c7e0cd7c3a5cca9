#ifndef CLRPROF_INSTR_PINVOKE_H
#define CLRPROF_INSTR_PINVOKE_H

// The absolute path of the library this code is linked into (dladdr on one
// of its own functions, then realpath), written to buf; -1 if unknown.
int clrprof_instr_self(char *buf, int n);

// dlsym on the library itself: the address of one of its exported
// functions (a Go //export), NULL if there is none by that name.
void *clrprof_instr_symbol(const char *name);

#endif
