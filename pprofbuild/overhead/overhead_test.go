package overhead

import (
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// spin uses about d of the calling thread's CPU time, however loaded the
// machine (at most 5 s of wall time).
func spin(d time.Duration) (n int) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0, _ := ThreadCPU()
	for t0 := time.Now(); time.Since(t0) < 5*time.Second; {
		for i := 0; i < 10000; i++ {
			n += i * i
		}
		if c, _ := ThreadCPU(); c-c0 >= d {
			break
		}
	}
	return n
}

// The thread's CPU time is the process's while nothing else runs: a spin
// inside Thread is counted whole (however loaded the machine), a sleep
// not at all.
func TestThreadCountsItsCPU(t *testing.T) {
	var a Account
	p0 := ProcessCPU()
	a.Thread(func() { spin(60 * time.Millisecond) })
	proc := ProcessCPU() - p0
	r := a.Report()
	t.Logf("sampler %v, process %v", r.Sampler, proc)
	if r.Sampler < 5*time.Millisecond || r.Sampler > proc+2*time.Millisecond || r.Sampler < proc*7/10-5*time.Millisecond {
		t.Errorf("sampler CPU %v for a spin while the process used %v", r.Sampler, proc)
	}
	var b Account
	b.Thread(func() { time.Sleep(50 * time.Millisecond) })
	if s := b.Report().Sampler; s > 5*time.Millisecond {
		t.Errorf("sampler CPU %v for a 50 ms sleep", s)
	}
}

// Snapshot counts the hold and the sampler's CPU time during it, at most
// the hold.
func TestSnapshotNotesCPU(t *testing.T) {
	var a Account
	a.Thread(func() {
		a.Snapshot(func() time.Duration { spin(30 * time.Millisecond); return 25 * time.Millisecond })
		a.Snapshot(func() time.Duration { time.Sleep(20 * time.Millisecond); return 20 * time.Millisecond })
	})
	r := a.Report()
	t.Logf("held %v held CPU %v sampler %v", r.Held, r.HeldCPU, r.Sampler)
	if r.Held != 45*time.Millisecond || r.Snapshots != 2 {
		t.Errorf("held %v in %d snapshots", r.Held, r.Snapshots)
	}
	if r.HeldCPU <= 0 || r.HeldCPU > 25*time.Millisecond+5*time.Millisecond || r.HeldCPU > r.Sampler {
		t.Errorf("held CPU %v (sampler %v): want the spin's, at most its 25 ms hold", r.HeldCPU, r.Sampler)
	}
}

func TestOutputTimesWallAndCPU(t *testing.T) {
	var a Account
	p0 := ProcessCPU()
	a.Output(func() { spin(40 * time.Millisecond); time.Sleep(30 * time.Millisecond) })
	proc := ProcessCPU() - p0
	r := a.Report()
	t.Logf("output wall %v cpu %v (process %v)", r.OutputWall, r.OutputCPU, proc)
	if r.OutputWall < 70*time.Millisecond {
		t.Errorf("output wall %v, want at least the 70 ms it took", r.OutputWall)
	}
	if r.OutputCPU < 5*time.Millisecond || r.OutputCPU > proc || r.OutputCPU > r.OutputWall+20*time.Millisecond {
		t.Errorf("output CPU %v for a spin and a sleep (process %v, wall %v)", r.OutputCPU, proc, r.OutputWall)
	}
}

func TestSumsAndFields(t *testing.T) {
	var a Account
	a.Held(3 * time.Millisecond)
	a.Held(2 * time.Millisecond)
	a.Callback(time.Now().Add(-4 * time.Millisecond))
	r := a.Report()
	if r.Held != 5*time.Millisecond || r.Snapshots != 2 || r.CallbackCount != 1 {
		t.Fatalf("report %+v", r)
	}
	if r.Callbacks < 4*time.Millisecond || r.Callbacks > 100*time.Millisecond {
		t.Errorf("callbacks %v for one of 4 ms", r.Callbacks)
	}
	if r.GoRuntime != 0 {
		t.Errorf("Go runtime %v without Start", r.GoRuntime)
	}
	r.Sampler, r.GoRuntime, r.OutputWall, r.OutputCPU = 7*time.Millisecond, 11*time.Millisecond, 13*time.Millisecond, 17*time.Millisecond
	r.HeldCPU = 3 * time.Millisecond // the sampler's, while it held: not counted twice
	if got, want := r.Wall(), r.Held+r.Callbacks+4*time.Millisecond+11*time.Millisecond+13*time.Millisecond; got != want {
		t.Errorf("Wall %v, want %v", got, want)
	}
	if got, want := r.CPU(), r.Callbacks+7*time.Millisecond+11*time.Millisecond+17*time.Millisecond; got != want {
		t.Errorf("CPU %v, want %v", got, want)
	}
	fields := map[string]int64{}
	for _, f := range strings.Fields(r.String()) {
		k, v, ok := strings.Cut(f, "=")
		n, err := strconv.ParseInt(v, 10, 64)
		if !ok || err != nil {
			t.Fatalf("field %q of %q", f, r.String())
		}
		fields[k] = n
	}
	back, ok := ParseReport("prefix=x " + r.String() + " suffix=1")
	if !ok {
		t.Fatalf("ParseReport(%q) failed", r.String())
	}
	if back.Wall().Microseconds() != r.Wall().Microseconds() || back.CPU().Microseconds() != r.CPU().Microseconds() || back.Snapshots != 2 || back.HeldCPU != 3*time.Millisecond {
		t.Errorf("ParseReport gave %+v from %+v", back, r)
	}
	if _, ok := ParseReport("held_us=1 snapshots=2"); ok {
		t.Errorf("ParseReport accepted a line without most fields")
	}
	for k, want := range map[string]int64{
		"cost_wall_us": r.Wall().Microseconds(), "cost_cpu_us": r.CPU().Microseconds(), "held_us": 5000, "snapshots": 2, "held_cpu_us": 3000,
		"callbacks": 1, "sampler_cpu_us": 7000, "goruntime_cpu_us": 11000, "output_wall_us": 13000, "output_cpu_us": 17000,
	} {
		if fields[k] != want {
			t.Errorf("%s=%d, want %d (%s)", k, fields[k], want, r.String())
		}
	}
}

var sink [][]byte

func TestGoRuntimeCountsCollections(t *testing.T) {
	var a Account
	a.Start()
	for i := 0; i < 20; i++ {
		sink = nil
		for j := 0; j < 2000; j++ {
			sink = append(sink, make([]byte, 4096))
		}
		runtime.GC()
	}
	sink = nil
	r := a.Report()
	t.Logf("Go runtime %v after 20 collections", r.GoRuntime)
	if r.GoRuntime <= 0 {
		t.Errorf("Go runtime CPU %v after 20 forced collections", r.GoRuntime)
	}
}

func TestFraction(t *testing.T) {
	if got := Fraction(25*time.Millisecond, time.Second); got != "2.50%" {
		t.Errorf("Fraction = %q", got)
	}
	if got := Fraction(time.Millisecond, 0); got != "-" {
		t.Errorf("Fraction of nothing = %q", got)
	}
}

// GoMemory counts what the heap holds: 64 MiB kept alive show in it.
func TestGoMemoryCountsTheHeap(t *testing.T) {
	runtime.GC()
	before := GoMemory()
	if before == 0 {
		t.Fatal("GoMemory is 0")
	}
	keep := make([][]byte, 64)
	for i := range keep {
		keep[i] = make([]byte, 1<<20)
		keep[i][0] = 1
	}
	after := GoMemory()
	runtime.KeepAlive(keep)
	// At least what is held now; more than before (the heap's free
	// space before may have taken part of it: seen 17 -> 69 MiB).
	if after < 64<<20 || after <= before {
		t.Errorf("GoMemory %d MiB -> %d MiB with 64 MiB more held", before>>20, after>>20)
	}
}

// GoHeapChurn counts bytes allocated and collections finished: 64 MiB
// allocated and two collections forced show in it.
func TestGoHeapChurnCounts(t *testing.T) {
	a0, c0 := GoHeapChurn()
	var keep [][]byte
	for range 64 {
		keep = append(keep, make([]byte, 1<<20))
	}
	runtime.KeepAlive(keep)
	runtime.GC()
	runtime.GC()
	a1, c1 := GoHeapChurn()
	if a1-a0 < 64<<20 {
		t.Errorf("allocated grew %d bytes with 64 MiB allocated", a1-a0)
	}
	if c1-c0 < 2 {
		t.Errorf("collections %d -> %d with two forced", c0, c1)
	}
}

// GoMemoryParts adds up to GoMemory, and each part follows what holds it:
// 32 MiB kept alive makes the heap's part at least that, and 64
// goroutines each deep in a recursion grow the stacks' part.
func TestGoMemoryParts(t *testing.T) {
	debug.FreeOSMemory()
	h0, s0, r0 := GoMemoryParts()
	total := GoMemory()
	t.Logf("heap %d KiB, stacks %d KiB, runtime %d KiB; GoMemory %d KiB", h0>>10, s0>>10, r0>>10, total>>10)
	if h0 == 0 || r0 == 0 {
		t.Fatalf("heap %d, runtime %d: a part is 0", h0, r0)
	}
	if sum := h0 + s0 + r0; sum > total+1<<20 || sum+1<<20 < total {
		t.Errorf("parts sum to %d, GoMemory is %d", sum, total)
	}
	keep := make([][]byte, 32)
	for i := range keep {
		keep[i] = make([]byte, 1<<20)
	}
	h1, _, _ := GoMemoryParts()
	runtime.KeepAlive(keep)
	if h1 < 32<<20 {
		t.Errorf("heap part %d -> %d with 32 MiB kept alive", h0, h1)
	}
	var wg, ready sync.WaitGroup
	stop := make(chan struct{})
	for range 64 {
		wg.Add(1)
		ready.Add(1)
		go func() {
			defer wg.Done()
			deep(2000, &ready, stop)
		}()
	}
	ready.Wait()
	_, s2, _ := GoMemoryParts()
	close(stop)
	wg.Wait()
	if s2 < s0+64*64<<10 {
		t.Errorf("stacks part %d -> %d with 64 goroutines 2000 frames deep", s0, s2)
	}
}

// deep recurses n frames (each with a 64-byte array on its stack), then
// signals ready and waits for stop.
func deep(n int, ready *sync.WaitGroup, stop chan struct{}) byte {
	var pad [64]byte
	pad[n%64] = byte(n)
	if n == 0 {
		ready.Done()
		<-stop
		return pad[0]
	}
	return deep(n-1, ready, stop) + pad[n%64]
}
