// Package testspin runs a thread of C that spins on a CPU until stopped:
// a thread the Go scheduler cannot park, for tests that need one of the
// process's threads runnable (state R) throughout. A goroutine locked to
// its thread does not do: Go preempts a spinning goroutine, and its thread
// then sleeps until the goroutine is scheduled again (under load, for
// milliseconds). Only tests import it.
package testspin

/*
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

static atomic_int spin_stop, spin_tid;
static pthread_t spin_thread;

static void *spin(void *arg) {
	(void)arg;
	atomic_store(&spin_tid, (int)syscall(SYS_gettid));
	while (!atomic_load_explicit(&spin_stop, memory_order_relaxed)) {
	}
	return 0;
}

static int spin_start(void) {
	atomic_store(&spin_stop, 0);
	atomic_store(&spin_tid, 0);
	if (pthread_create(&spin_thread, 0, spin, 0) != 0)
		return -1;
	while (atomic_load(&spin_tid) == 0)
		sched_yield();
	return atomic_load(&spin_tid);
}

static void spin_end(void) {
	atomic_store(&spin_stop, 1);
	pthread_join(spin_thread, 0);
}
*/
import "C"

import (
	"errors"
	"sync"
)

var mu sync.Mutex

// Start starts the spinning thread and returns its thread id; stop ends
// it. One runs at a time: a second Start waits for the first's stop.
func Start() (tid int, stop func(), err error) {
	mu.Lock()
	t := int(C.spin_start())
	if t < 0 {
		mu.Unlock()
		return 0, nil, errors.New("testspin: pthread_create failed")
	}
	var once sync.Once
	return t, func() {
		once.Do(func() {
			C.spin_end()
			mu.Unlock()
		})
	}, nil
}
