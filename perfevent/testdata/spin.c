/* A program without frame pointers (built by TestUnwindWithoutFramePointers
   with -O2 -fomit-frame-pointer): main calls level1, level2, level3 and
   spin, each keeping some stack of its own, and spins there until killed.
   Only the call frame information (.eh_frame) can unwind it. With the
   argument "signal", level3w raises SIGUSR1 instead and the handler spins:
   the stack then goes through the kernel's signal frame. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

volatile unsigned long sink;
static int in_signal;

__attribute__((noinline)) void spin(volatile unsigned long *buf) {
	for (;;) {
		for (int i = 0; i < 64; i++)
			buf[i] = buf[i] * 31 + i;
		sink += buf[7];
	}
}

__attribute__((noinline)) void handler(int sig) {
	volatile unsigned long buf[64];
	for (int i = 0; i < 64; i++) buf[i] = sig + i;
	spin(buf);
}

#define LEVEL(name, next, n) \
	__attribute__((noinline)) void name(unsigned long seed) { \
		volatile unsigned long buf[n]; \
		for (int i = 0; i < n; i++) buf[i] = seed + i; \
		next((unsigned long *)buf); \
		sink += buf[1]; \
	}

__attribute__((noinline)) void level3w(unsigned long *b) {
	if (in_signal) {
		raise(SIGUSR1);
		sink += b[0];
	}
	spin((volatile unsigned long *)b);
}
LEVEL(level3, level3w, 300)
__attribute__((noinline)) void level2w(unsigned long *b) { level3(b[2]); }
LEVEL(level2, level2w, 17)
__attribute__((noinline)) void level1w(unsigned long *b) { level2(b[3]); }
LEVEL(level1, level1w, 1000)

int main(int argc, char **argv) {
	if (argc > 1 && strcmp(argv[1], "signal") == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = handler;
		sigaction(SIGUSR1, &sa, 0);
		in_signal = 1;
	}
	printf("%ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	level1(42);
	return 0;
}
