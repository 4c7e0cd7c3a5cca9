package profiler

import (
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/clrprof/clrprof/internal/procstat"
)

// quiesceWait is the wait after Shutdown on .NET Core 2.x (see quiesce):
// it lasts while another thread of the process is on a CPU, waiting for
// one (state R) or in an uninterruptible wait (D, a page fault), polled
// every quiesceDrainPoll, for quiesceDrain at most. A thread between the
// runtime's mask check and its call through the callback pointer is
// executing the runtime's code, so it is in R (or D if it faults there):
// when every other thread is asleep (S), stopped or a zombie, none can be
// in that window and Shutdown returns at once. If the process's threads
// cannot be read, the whole quiesceDrain is waited. It returns how long it
// waited and the last thread seen busy ("" if none was: its id, name and
// state), or why the threads could not be read.
func quiesceWait() (time.Duration, string) {
	start := time.Now()
	self := syscall.Gettid()
	buf := make([]byte, 0, 512)
	last := ""
	for {
		busy, err := otherThreadsRunnable(self, buf)
		waited := time.Since(start)
		if err != nil {
			if rest := quiesceDrain - waited; rest > 0 {
				time.Sleep(rest)
			}
			return time.Since(start), err.Error()
		}
		if busy == "" || waited >= quiesceDrain {
			return waited, last
		}
		last = busy
		time.Sleep(quiesceDrainPoll)
	}
}

// quiesceDrainPoll is how often quiesceWait looks at the threads again.
const quiesceDrainPoll = time.Millisecond

// otherThreadsRunnable returns the first thread of the process other than
// self in state R or D (/proc/self/task/*/stat), as its stat line's start
// (id, name, state), or "" if there is none.
func otherThreadsRunnable(self int, buf []byte) (string, error) {
	d, err := os.Open("/proc/self/task")
	if err != nil {
		return "", err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return "", err
	}
	for _, n := range names {
		tid, err := strconv.Atoi(n)
		if err != nil || tid == self {
			continue
		}
		b, err := readSmall("/proc/self/task/"+n+"/stat", buf)
		if err != nil {
			continue // the thread has exited
		}
		if head, rest, ok := procstat.Split(b); ok && (rest[0] == 'R' || rest[0] == 'D') {
			return string(head) + " " + string(rest[0]), nil
		}
	}
	return "", nil
}

// readSmall reads a small file into buf's storage.
func readSmall(path string, buf []byte) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	n, err := f.Read(buf[:cap(buf)])
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}
