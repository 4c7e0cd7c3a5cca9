//go:build linux && amd64

// Package perfevent samples the CPU time of chosen threads of the current
// process with the kernel's perf events, without signals and without
// stopping anything: for each thread a task-clock sampling event
// (perf_event_open(2): PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK,
// user space only) makes the kernel record, every Period of that thread's
// CPU time, the thread's instruction pointer and its call stack into a ring
// buffer shared with the process, which [Sampler.Drain] reads from an
// ordinary goroutine. The sampled thread is interrupted only by the
// kernel's timer interrupt, as by any preemption: no signal reaches it, so
// nothing runs on its stack, and a runtime in the process (CoreCLR, with
// its own signal handling) never sees the sampler.
//
// The call stack comes one of two ways. By default the kernel follows the
// frame pointers (rbp chains) itself: cheap, but a frame that keeps no
// frame pointer (most native code built with optimisation: a runtime's, a
// JIT's, the C library's) makes the chain skip its caller or end early.
// With [Options.StackBytes] the kernel instead copies the thread's
// registers and the top of its stack into each sample, and the package
// unwinds the copy itself: through code with call frame information
// (the .eh_frame of every ELF file mapped executable, read once per file)
// by that information, which is exact at every instruction; through code
// without it (code a JIT compiled, Go) by the frame pointers. The kernel
// also reports each executable mapping a sampled thread makes (a JIT's new
// code), so that an unwound address in it is known to be code without
// rereading /proc/self/maps.
//
// What it cannot see: a frame without call frame information that keeps
// no frame pointer hides its caller; an address outside the process's
// executable mappings ends the stack (Sample.Broken), so that every
// address a Sample holds is code and a consumer may hand it to a runtime's
// code lookup; the kernel's chains stop at perf_event_max_stack (127 by
// default) and the copies at StackBytes (Sample.Short). It needs perf
// events for the process's own threads: Linux allows them to unprivileged
// processes up to /proc/sys/kernel/perf_event_paranoid 2 (the default; 3
// and above, and container seccomp profiles that block perf_event_open,
// refuse them, and Add returns the error). The package is pure Go (no
// cgo), for linux/amd64; the call frame information decoder is fuzzed.
package perfevent

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Options configure a Sampler.
type Options struct {
	// Period is the CPU time of a thread between two of its samples
	// (default 10.1 ms: 99 Hz of CPU).
	Period time.Duration
	// MaxDepth bounds the call chain of a sample (default 127; at most
	// 127, the kernel's default limit, unless StackBytes is set).
	MaxDepth int
	// RingPages is the size of each thread's ring buffer in pages, a power
	// of 2 (default 16: 64 KiB, about a hundred samples of 64 frames).
	// A ring that fills before Drain empties it loses samples (Lost).
	// With StackBytes, the default holds at least 16 samples. Where the
	// kernel refuses that much locked memory, the ring is halved (down to
	// 8 pages) until it accepts (Stats.Smaller).
	RingPages int
	// StackBytes, when not 0, has the kernel copy the thread's registers
	// and this many bytes from the top of its stack into each sample
	// (rounded up to 8, at most 65528) instead of following the frame
	// pointers itself; the package then unwinds each sample: by the call
	// frame information (.eh_frame) of the shared libraries the code
	// belongs to, which stays right through native code compiled without
	// frame pointers (a runtime's, the JIT's, the C library's), and by the
	// frame pointers through code without it (code a JIT compiled). A
	// stack deeper than the copy ends early (Sample.Short).
	StackBytes int
}

// Sample is one sample of a thread: its instruction pointer, then the
// return addresses of its call chain, innermost first.
type Sample struct {
	TID   uint32
	Stack []uint64
	// Truncated says the call chain reached MaxDepth entries: deeper
	// callers are missing.
	Truncated bool
	// Broken says the chain reached an address outside the process's
	// executable mappings (a frame that does not keep rbp as a frame
	// pointer): it is cut there, outer callers missing.
	Broken bool
	// With Options.StackBytes: Short says the stack copy ended before the
	// outermost frame; Stopped says the unwinding met a frame it cannot
	// follow (a signal frame, a frame address given by an expression, a
	// frame without call frame information and without a frame pointer).
	// Outer callers are missing.
	Short, Stopped bool
}

// Sampler holds one perf event and ring buffer per sampled thread.
type Sampler struct {
	opts    Options
	mu      sync.Mutex
	threads map[uint32]*ring
	lost    atomic.Uint64
	opened  atomic.Uint64
	failed  atomic.Uint64
	lastErr error
	closed  bool
	exec    execMap
	cut     atomic.Uint64
	short   atomic.Uint64
	smaller atomic.Uint64
	stopped atomic.Uint64
	unw     unwinder
	rec     []byte   // a record that wraps around its ring, copied
	stack   []uint64 // a sample's stack, reused
}

type ring struct {
	tid  uint32
	fd   int
	mem  []byte
	data []byte // the data area of mem
}

const (
	perfTypeSoftware           = 1
	perfCountSWTaskClock       = 1
	sampleIP                   = 1 << 0
	sampleTID                  = 1 << 1
	sampleCallchain            = 1 << 5
	sampleRegsUser             = 1 << 12
	sampleStackUser            = 1 << 13
	flagExcludeKernel          = 1 << 5
	flagExcludeHV              = 1 << 6
	flagExcludeCallchainKernel = 1 << 21
	flagMmap                   = 1 << 8
	recordMmap                 = 1
	perfFlagFDCloexec          = 1 << 3
	recordLost                 = 2
	recordSample               = 9
	// Call chain entries at or above this are context markers
	// (PERF_CONTEXT_USER and friends), not addresses.
	contextMax = ^uint64(4095 - 1) // (u64)-4095
	attrSize   = 112               // PERF_ATTR_SIZE_VER5
)

// New returns a Sampler sampling no thread yet (see Add).
func New(opts Options) (*Sampler, error) {
	if opts.Period <= 0 {
		opts.Period = time.Second / 99
	}
	if opts.MaxDepth <= 0 || (opts.MaxDepth > 127 && opts.StackBytes == 0) {
		opts.MaxDepth = 127
	}
	if opts.StackBytes < 0 || opts.StackBytes > 65528 {
		return nil, fmt.Errorf("perfevent: StackBytes %d: want 0 to 65528", opts.StackBytes)
	}
	opts.StackBytes = (opts.StackBytes + 7) &^ 7
	if opts.RingPages <= 0 {
		opts.RingPages = 16
		for opts.RingPages*os.Getpagesize() < 16*(opts.StackBytes+256) {
			opts.RingPages *= 2
		}
	}
	if opts.RingPages&(opts.RingPages-1) != 0 {
		return nil, fmt.Errorf("perfevent: RingPages %d: want a power of 2", opts.RingPages)
	}
	return &Sampler{opts: opts, threads: map[uint32]*ring{}}, nil
}

// open opens and maps the event of one thread.
func (s *Sampler) open(tid uint32) (*ring, error) {
	var attr [attrSize]byte
	le := binary.LittleEndian
	le.PutUint32(attr[0:], perfTypeSoftware)
	le.PutUint32(attr[4:], attrSize)
	le.PutUint64(attr[8:], perfCountSWTaskClock)
	le.PutUint64(attr[16:], uint64(s.opts.Period.Nanoseconds()))
	if s.opts.StackBytes > 0 {
		le.PutUint64(attr[24:], sampleIP|sampleTID|sampleRegsUser|sampleStackUser)
		le.PutUint64(attr[80:], regsMask) // sample_regs_user
		le.PutUint32(attr[88:], uint32(s.opts.StackBytes))
	} else {
		le.PutUint64(attr[24:], sampleIP|sampleTID|sampleCallchain)
		le.PutUint16(attr[108:], uint16(s.opts.MaxDepth)) // sample_max_stack
	}
	flags := uint64(flagExcludeKernel | flagExcludeHV | flagExcludeCallchainKernel)
	if s.opts.StackBytes > 0 {
		// The thread's executable mappings as it makes them (a JIT
		// mapping new code), so that an unwound address in them is
		// known without rereading /proc/self/maps.
		flags |= flagMmap
	}
	le.PutUint64(attr[40:], flags)
	fd, _, errno := syscall.Syscall6(syscall.SYS_PERF_EVENT_OPEN, uintptr(unsafe.Pointer(&attr[0])), uintptr(tid), ^uintptr(0), ^uintptr(0), perfFlagFDCloexec, 0)
	if errno != 0 {
		return nil, fmt.Errorf("perfevent: perf_event_open(thread %d): %w", tid, errno)
	}
	page := os.Getpagesize()
	// A ring counts against the user's locked-memory allowance for perf
	// (perf_event_mlock_kb per CPU, then RLIMIT_MEMLOCK): past it the
	// kernel refuses the mapping, and a smaller ring (down to 8 pages)
	// is better than no sampling of the thread.
	var mem []byte
	var err error
	for pages := s.opts.RingPages; ; pages /= 2 {
		mem, err = syscall.Mmap(int(fd), 0, (1+pages)*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
		if err == nil || pages <= 8 || (err != syscall.EPERM && err != syscall.ENOMEM) {
			break
		}
		s.smaller.Add(1)
	}
	if err != nil {
		syscall.Close(int(fd))
		return nil, fmt.Errorf("perfevent: mmap(thread %d): %w", tid, err)
	}
	r := &ring{tid: tid, fd: int(fd), mem: mem}
	off, size := le.Uint64(mem[1040:]), le.Uint64(mem[1048:]) // data_offset, data_size
	if off == 0 || size == 0 {
		off, size = uint64(page), uint64(len(mem)-page)
	}
	r.data = mem[off : off+size]
	return r, nil
}

func (r *ring) close() {
	syscall.Munmap(r.mem)
	syscall.Close(r.fd)
}

// SetThreads makes the sampler sample exactly the threads tids (OS thread
// IDs of this process): it starts sampling the new ones and, after reading
// what their rings hold (into fn), stops sampling those no longer listed.
// A thread that cannot be sampled is counted (Stats) and skipped.
func (s *Sampler) SetThreads(tids []uint32, fn func(Sample)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	want := make(map[uint32]bool, len(tids))
	for _, t := range tids {
		want[t] = true
		if _, ok := s.threads[t]; ok {
			continue
		}
		r, err := s.open(t)
		if err != nil {
			s.failed.Add(1)
			s.lastErr = err
			continue
		}
		s.opened.Add(1)
		s.threads[t] = r
	}
	for t, r := range s.threads {
		if !want[t] {
			s.drain(r, fn)
			r.close()
			delete(s.threads, t)
		}
	}
}

// Add starts sampling one thread (an OS thread ID of this process); the
// error says why the kernel refused (perf_event_paranoid, seccomp).
func (s *Sampler) Add(tid uint32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("perfevent: closed")
	}
	if _, ok := s.threads[tid]; ok {
		return nil
	}
	r, err := s.open(tid)
	if err != nil {
		s.failed.Add(1)
		s.lastErr = err
		return err
	}
	s.opened.Add(1)
	s.threads[tid] = r
	return nil
}

// Drain reads every sample the rings hold, oldest first per thread, and
// calls fn with each (the Stack is reused after fn returns).
func (s *Sampler) Drain(fn func(Sample)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opts.StackBytes > 0 {
		// Code one thread mapped may be on another's stack: every ring's
		// mappings first.
		for _, r := range s.threads {
			s.scanMmaps(r)
		}
	}
	for _, r := range s.threads {
		s.drain(r, fn)
	}
}

// scanMmaps adds the executable mappings a ring reports (PERF_RECORD_MMAP:
// pid, tid, addr, len, pgoff, filename) to the map, without consuming
// anything.
func (s *Sampler) scanMmaps(r *ring) {
	s.records(r, func(typ uint32, body []byte) {
		if typ == recordMmap && len(body) >= 32 {
			s.addMmap(body)
		}
	})
}

func (s *Sampler) addMmap(body []byte) {
	le := binary.LittleEndian
	addr, n, pgoff := le.Uint64(body[8:]), le.Uint64(body[16:]), le.Uint64(body[24:])
	name := body[32:]
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	file := ""
	if len(name) > 0 && name[0] == '/' {
		file = string(name)
	}
	s.exec.add(mapping{lo: addr, hi: addr + n, off: pgoff, file: file})
}

// records calls fn with the type and body of each record the ring holds,
// oldest first, and returns the position after the last (the tail that
// consumes them). A body is read in place, unless the record wraps around
// the ring's end (the kernel does not write it again before the tail moves
// past it), and is valid until fn returns.
func (s *Sampler) records(r *ring, fn func(typ uint32, body []byte)) uint64 {
	head := atomic.LoadUint64((*uint64)(unsafe.Pointer(&r.mem[1024]))) // acquire: the records before head are written
	tail := atomic.LoadUint64((*uint64)(unsafe.Pointer(&r.mem[1032])))
	size := uint64(len(r.data))
	for tail < head {
		var hdr [8]byte
		copyRing(hdr[:], r.data, tail%size)
		n := uint64(binary.LittleEndian.Uint16(hdr[6:]))
		if n < 8 || tail+n > head {
			break // cannot happen: a torn record; drop the rest
		}
		var rec []byte
		if off := tail % size; off+n <= size {
			rec = r.data[off : off+n]
		} else {
			if cap(s.rec) < int(n) {
				s.rec = make([]byte, n)
			}
			rec = s.rec[:n]
			copyRing(rec, r.data, off)
		}
		fn(binary.LittleEndian.Uint32(hdr[0:]), rec[8:])
		tail += n
	}
	return tail
}

func (s *Sampler) drain(r *ring, fn func(Sample)) {
	stack := s.stack
	defer func() { s.stack = stack }()
	tail := s.records(r, func(typ uint32, body []byte) {
		switch typ {
		case recordLost:
			if len(body) >= 16 {
				s.lost.Add(binary.LittleEndian.Uint64(body[8:]))
			}
		case recordSample:
			if s.opts.StackBytes > 0 {
				stack = s.unwindRecord(body, stack, fn)
				return
			}
			// ip, pid, tid, nr, ips[nr]
			if len(body) < 24 {
				return
			}
			ip := binary.LittleEndian.Uint64(body[0:])
			tid := binary.LittleEndian.Uint32(body[12:])
			nr := binary.LittleEndian.Uint64(body[16:])
			ips := body[24:]
			if nr > uint64(len(ips)/8) {
				nr = uint64(len(ips) / 8)
			}
			stack = append(stack[:0], ip)
			broken := false
			for i := uint64(0); i < nr; i++ {
				a := binary.LittleEndian.Uint64(ips[8*i:])
				if a >= contextMax {
					continue // PERF_CONTEXT_USER
				}
				if len(stack) == 1 && a == ip {
					continue // the chain starts with the sample's own IP
				}
				if !s.exec.contains(a) {
					broken = true // not code: the chain went astray here
					break
				}
				stack = append(stack, a)
			}
			if broken {
				s.cut.Add(1)
			}
			fn(Sample{TID: tid, Stack: stack, Truncated: nr >= uint64(s.opts.MaxDepth), Broken: broken})
		}
	})
	atomic.StoreUint64((*uint64)(unsafe.Pointer(&r.mem[1032])), tail) // release: the kernel may reuse the space
}

// copyRing copies len(dst) bytes of the ring data starting at off,
// wrapping around its end.
func copyRing(dst, data []byte, off uint64) {
	n := copy(dst, data[off:])
	if n < len(dst) {
		copy(dst[n:], data)
	}
}

// Stats are the threads whose sampling started and failed, the samples
// the kernel lost (rings full before Drain), the samples whose chain
// was cut at an address that is not code (Sample.Broken), and with
// Options.StackBytes those whose stack copy ended first (Sample.Short) and
// those whose unwinding stopped at a frame it cannot follow
// (Sample.Stopped).
type Stats struct {
	Threads, Failed, Lost, Broken, Short, Stopped uint64
	// Smaller counts the rings mapped at half the size asked (or less)
	// because the kernel refused the memory (the locked-memory limit).
	Smaller uint64
	// Err is the last failure to start sampling a thread.
	Err error
}

// Stats returns the sampler's counts so far.
func (s *Sampler) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{Threads: s.opened.Load(), Failed: s.failed.Load(), Lost: s.lost.Load(), Broken: s.cut.Load(), Short: s.short.Load(), Stopped: s.stopped.Load(), Smaller: s.smaller.Load(), Err: s.lastErr}
}

// Close stops sampling every thread (without reading their rings: Drain
// first).
func (s *Sampler) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for t, r := range s.threads {
		r.close()
		delete(s.threads, t)
	}
	s.closed = true
}

// The user registers a sample carries with StackBytes (perf's x86 register
// numbers: ax bx cx dx si di bp sp ip, r8–r15), in this order, and their
// DWARF numbers.
const regsMask = 0x1ff | 0xff<<16

var perfToDwarf = [...]int{0, 3, 2, 1, 4, 5, dwRBP, dwRSP, dwRA, 8, 9, 10, 11, 12, 13, 14, 15}

// unwindRecord decodes a sample taken with StackBytes (ip, pid, tid, abi,
// regs, size, stack[size], dyn_size), unwinds it and hands it to fn.
func (s *Sampler) unwindRecord(body []byte, stack []uint64, fn func(Sample)) []uint64 {
	le := binary.LittleEndian
	nregs := len(perfToDwarf)
	if len(body) < 24 {
		return stack
	}
	tid := le.Uint32(body[12:])
	abi := le.Uint64(body[16:])
	rest := body[24:]
	var regs [nRegs]uint64
	var valid [nRegs]bool
	if abi != 0 {
		if len(rest) < 8*nregs {
			return stack
		}
		for i, d := range perfToDwarf {
			regs[d], valid[d] = le.Uint64(rest[8*i:]), true
		}
		rest = rest[8*nregs:]
	} else {
		// No user registers (the sample hit a kernel thread): the IP alone.
		regs[dwRA], valid[dwRA] = le.Uint64(body[0:]), true
	}
	var data []byte
	if len(rest) >= 8 {
		size := le.Uint64(rest)
		rest = rest[8:]
		if size > 0 && size <= uint64(len(rest)) && len(rest) >= int(size)+8 {
			dyn := le.Uint64(rest[size:])
			data = rest[:min(dyn, size)]
		}
	}
	stack, end := s.unw.unwind(&s.exec, regs, valid, data, stack[:0], s.opts.MaxDepth)
	smp := Sample{TID: tid, Stack: stack}
	switch end {
	case endOutermost:
		smp.Truncated = len(stack) >= s.opts.MaxDepth
	case endShort:
		smp.Short = true
		s.short.Add(1)
	case endStopped:
		smp.Stopped = true
		s.stopped.Add(1)
	case endBroken:
		smp.Broken = true
		s.cut.Add(1)
	}
	if len(stack) > 0 {
		fn(smp)
	}
	return stack
}
