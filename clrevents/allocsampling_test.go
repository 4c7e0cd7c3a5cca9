package clrevents

import (
	"encoding/hex"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// realAllocationSampled are AllocationSampled payloads (event 303, version
// 0) as 10.0.15 and 11.0.0 delivered them to an in-process EventPipe
// session of a profiler (keyword 0x80000000000, level 4), from an app
// allocating a class of three longs and a reference (Item, 48 bytes),
// byte[1000], byte[150000] (large object heap), strings, and
// GC.AllocateArray<long>(1000, pinned: true) (pinned object heap).
var realAllocationSampled = []struct {
	runtime, hex string
	want         AllocationSampled
}{
	{"10.0.15", "0000000000002815e479167f00004900740065006d000000e08cca330a7f000030000000000000000700000000000000",
		AllocationSampled{TypeID: 0x7f1679e41528, TypeName: "Item", Address: 0x7f0a33ca8ce0, ObjectSize: 48, SampledByteOffset: 7}},
	{"10.0.15", "000000000000d05bd579167f0000530079007300740065006d002e0042007900740065005b005d000000d092ac380a7f00000004000000000000ec03000000000000",
		AllocationSampled{TypeID: 0x7f1679d55bd0, TypeName: "System.Byte[]", Address: 0x7f0a38ac92d0, ObjectSize: 1024, SampledByteOffset: 1004}},
	{"10.0.15", "010000000000d05bd579167f0000530079007300740065006d002e0042007900740065005b005d000000480000340a7f0000084a020000000000f0b1010000000000",
		AllocationSampled{AllocationKind: 1, TypeID: 0x7f1679d55bd0, TypeName: "System.Byte[]", Address: 0x7f0a34000048, ObjectSize: 150024, SampledByteOffset: 111088}},
	{"10.0.15", "0200000000004816e479167f0000530079007300740065006d002e0049006e007400360034005b005d000000809d40310a7f0000581f000000000000981c000000000000",
		AllocationSampled{AllocationKind: 2, TypeID: 0x7f1679e41648, TypeName: "System.Int64[]", Address: 0x7f0a31409d80, ObjectSize: 8024, SampledByteOffset: 7320}},
	{"10.0.15", "00000000000058ddc579167f0000530079007300740065006d002e0053007400720069006e0067000000b016c0330a7f0000c8950000000000003d91000000000000",
		AllocationSampled{TypeID: 0x7f1679c5dd58, TypeName: "System.String", Address: 0x7f0a33c016b0, ObjectSize: 38344, SampledByteOffset: 37181}},
	{"11.0.0", "000000000000c04669f08b7f00004900740065006d00000048f5c9af7f7f000030000000000000001000000000000000",
		AllocationSampled{TypeID: 0x7f8bf06946c0, TypeName: "Item", Address: 0x7f7fafc9f548, ObjectSize: 48, SampledByteOffset: 16}},
	{"11.0.0", "000000000000d0cc5af08b7f0000530079007300740065006d002e0042007900740065005b005d00000010d8a9b47f7f00000004000000000000f901000000000000",
		AllocationSampled{TypeID: 0x7f8bf05accd0, TypeName: "System.Byte[]", Address: 0x7f7fb4a9d810, ObjectSize: 1024, SampledByteOffset: 505}},
	{"11.0.0", "010000000000d0cc5af08b7f0000530079007300740065006d002e0042007900740065005b005d000000480000b07f7f0000084a020000000000dd83000000000000",
		AllocationSampled{AllocationKind: 1, TypeID: 0x7f8bf05accd0, TypeName: "System.Byte[]", Address: 0x7f7fb0000048, ObjectSize: 150024, SampledByteOffset: 33757}},
	{"11.0.0", "020000000000e04769f08b7f0000530079007300740065006d002e0049006e007400360034005b005d000000409841ad7f7f0000581f000000000000841c000000000000",
		AllocationSampled{AllocationKind: 2, TypeID: 0x7f8bf06947e0, TypeName: "System.Int64[]", Address: 0x7f7fad419840, ObjectSize: 8024, SampledByteOffset: 7300}},
	{"11.0.0", "00000000000060f44cf08b7f0000530079007300740065006d002e0053007400720069006e00670000002855c7af7f7f000060000000000000004800000000000000",
		AllocationSampled{TypeID: 0x7f8bf04cf460, TypeName: "System.String", Address: 0x7f7fafc75528, ObjectSize: 96, SampledByteOffset: 72}},
}

func realPayload(t testing.TB, h string) []byte {
	b, err := hex.DecodeString(h)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The payloads the runtimes sent decode to their fields, every byte read:
// one byte less is an error (ErrShort), bytes appended are ignored.
func TestDecodeAllocationSampledReal(t *testing.T) {
	for _, c := range realAllocationSampled {
		data := realPayload(t, c.hex)
		ev, err := DecodeRuntime(IDAllocationSampled, 0, data)
		if err != nil {
			t.Fatalf("%s %s: %v", c.runtime, c.want.TypeName, err)
		}
		if !reflect.DeepEqual(ev, &c.want) {
			t.Errorf("%s: got %+v\nwant %+v", c.runtime, ev, c.want)
		}
		e := ev.(*AllocationSampled)
		if e.SampledByteOffset >= e.ObjectSize {
			t.Errorf("%s %s: offset %d outside the object's %d bytes", c.runtime, e.TypeName, e.SampledByteOffset, e.ObjectSize)
		}
		for n := 0; n < len(data); n++ {
			if _, err := DecodeRuntime(IDAllocationSampled, 0, data[:n]); !errors.Is(err, ErrShort) {
				t.Fatalf("%s %s: the first %d of %d bytes: %v, want ErrShort", c.runtime, e.TypeName, n, len(data), err)
			}
		}
		ev, err = DecodeRuntime(IDAllocationSampled, 1, append(data[:len(data):len(data)], 9, 9, 9, 9))
		c.want.Version = 1
		if err != nil || !reflect.DeepEqual(ev, &c.want) {
			t.Errorf("%s: a version 1 with a field appended: %+v %v", c.runtime, ev, err)
		}
	}
	// A TypeName without its terminating NUL is short, not a panic.
	var p Payload
	p.UInt32(0).UInt16(0).UInt64(1)
	if _, err := DecodeRuntime(IDAllocationSampled, 0, append(p.Bytes(), 'A', 0, 'B')); !errors.Is(err, ErrShort) {
		t.Errorf("unterminated name: %v", err)
	}
}

func TestAllocationSampledProbability(t *testing.T) {
	p := 1.0 / AllocationSamplingMean
	for _, c := range []struct {
		size uint64
		want float64
	}{
		{0, 0},
		{1, p},
		{2, 1 - (1-p)*(1-p)},
		{48, 1 - math.Pow(1-p, 48)},
		{85000, 1 - math.Pow(1-p, 85000)},
		{1 << 30, 1},
	} {
		got := AllocationSampledProbability(c.size)
		// (math.Pow loses digits for small sizes: the want is good to about 1e-11)
		if math.Abs(got-c.want) > 1e-9*c.want {
			t.Errorf("size %d: %g, want %g", c.size, got, c.want)
		}
	}
}

// The estimator is unbiased in expectation for every size and keep: one
// object of s bytes contributes s/π with probability π. And the sample
// variance estimate's expectation is the variance.
func TestAllocationEstimateUnbiased(t *testing.T) {
	for _, keep := range []float64{1, 0.5, 0.1953125} {
		for _, s := range []uint64{1, 24, 48, 1024, 85000, 150024, 1 << 24} {
			var e AllocationEstimate
			_, b := e.Add(s, keep)
			pi := keep * AllocationSampledProbability(s)
			if got := pi * b; math.Abs(got-float64(s)) > 1e-9*float64(s) {
				t.Errorf("keep %g size %d: E[bytes] = %g, want %d", keep, s, got, s)
			}
			if got, want := pi*e.Variance, AllocationVariance(s, 1, keep); math.Abs(got-want) > 1e-9*math.Max(want, 1) {
				t.Errorf("keep %g size %d: E[variance estimate] = %g, want %g", keep, s, got, want)
			}
			// With keep 1 the variance per byte is at most mean-1.
			if keep == 1 && AllocationVariance(s, 1, 1)/float64(s) > AllocationSamplingMean-1+1e-6 {
				t.Errorf("size %d: variance per byte %g over %d", s, AllocationVariance(s, 1, 1)/float64(s), AllocationSamplingMean-1)
			}
		}
	}
	var e AllocationEstimate
	if o, b := e.Add(0, 1); o != 0 || b != 0 || e.Samples != 0 {
		t.Errorf("size 0 added")
	}
	if o, b := e.Add(10, 0); o != 0 || b != 0 || e.Samples != 0 {
		t.Errorf("keep 0 added")
	}
	if o, b := e.Add(10, math.NaN()); o != 0 || b != 0 || e.Samples != 0 {
		t.Errorf("keep NaN added")
	}
}

// The runtime's sampling simulated byte by byte (a geometric gap between
// picked bytes, skipping to the end of a sampled object), on a mix of
// sizes: the estimate of the total and of one size class lies within 5
// standard deviations (from AllocationVariance, the population's exact
// variance) of the truth, and the sample variance estimate near it. The
// seed is fixed: the outcome is the same on every run.
func TestAllocationEstimateSimulated(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	p := 1.0 / AllocationSamplingMean
	gap := func() uint64 { return uint64(math.Floor(math.Log(1-rng.Float64()) / math.Log1p(-p))) }
	type class struct{ size, count uint64 }
	classes := []class{{48, 2_000_000}, {1024, 50_000}, {150024, 300}, {24, 1_000_000}}
	for _, keep := range []float64{1, 0.25} {
		var all AllocationEstimate
		per := make([]AllocationEstimate, len(classes))
		var trueBytes, trueVar float64
		left := gap()
		for i, c := range classes {
			trueBytes += float64(c.size * c.count)
			trueVar += AllocationVariance(c.size, c.count, keep)
			for range c.count {
				if left >= c.size {
					left -= c.size
					continue
				}
				left = gap() // the object is sampled; trials resume after it
				if rng.Float64() < keep {
					all.Add(c.size, keep)
					per[i].Add(c.size, keep)
				}
			}
		}
		sd := math.Sqrt(trueVar)
		t.Logf("keep %g: %d samples, estimate %.0f of %.0f bytes (%+.2f sd), sd %.0f (%.2f%%), estimated sd %.0f",
			keep, all.Samples, all.Bytes, trueBytes, (all.Bytes-trueBytes)/sd, sd, 100*sd/trueBytes, all.StdErr())
		if math.Abs(all.Bytes-trueBytes) > 5*sd {
			t.Errorf("keep %g: estimate %.0f, true %.0f: off by more than 5 sd (%.0f)", keep, all.Bytes, trueBytes, sd)
		}
		if r := all.StdErr() / sd; r < 0.8 || r > 1.25 {
			t.Errorf("keep %g: estimated sd %.0f, true %.0f", keep, all.StdErr(), sd)
		}
		c := classes[0]
		csd := math.Sqrt(AllocationVariance(c.size, c.count, keep))
		if d := per[0].Bytes - float64(c.size*c.count); math.Abs(d) > 5*csd {
			t.Errorf("keep %g: %d-byte objects: estimate off by %.0f, more than 5 sd (%.0f)", keep, c.size, d, csd)
		}
	}
}

func FuzzDecodeAllocationSampled(f *testing.F) {
	for _, c := range realAllocationSampled {
		f.Add(uint32(0), realPayload(f, c.hex))
	}
	f.Add(uint32(1), []byte{})
	f.Fuzz(func(t *testing.T, version uint32, data []byte) {
		ev, err := DecodeRuntime(IDAllocationSampled, version, data)
		if err != nil {
			if ev != nil || !errors.Is(err, ErrShort) {
				t.Fatalf("error %v with event %v", err, ev)
			}
			return
		}
		e, ok := ev.(*AllocationSampled)
		if !ok || e.Version != version {
			t.Fatalf("decoded %#v", ev)
		}
		var est AllocationEstimate
		if o, b := est.Add(e.ObjectSize, 1); math.IsNaN(b) || math.IsInf(b, 0) || o < 0 || b < 0 {
			t.Fatalf("size %d stands for %g objects, %g bytes", e.ObjectSize, o, b)
		}
	})
}
