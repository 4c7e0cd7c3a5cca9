/* The native side of the transitions scenarios: the app calls DoPInvoke
 * (a P/Invoke), which calls back into the app through the function pointer
 * it was given (a reverse P/Invoke). */
#include <stdio.h>

typedef int (*callback_fn)(int);

__attribute__((visibility("default"))) void DoPInvoke(callback_fn callback, int i) {
    printf("native DoPInvoke: the callback returned %d\n", callback(i));
    fflush(stdout);
}
