package clrevents

import "math"

// AllocationSamplingMean is the mean distance, in bytes, between the bytes
// the runtime's allocation sampling picks (AllocationSampled, .NET 10+):
// each allocated byte is picked with probability 1/AllocationSamplingMean,
// independently, and an object is sampled when one of its bytes is. The
// runtime fixes it (102,400 on 10.0.15 and 11.0.0, no setting changes it).
const AllocationSamplingMean = 102400

// AllocationSampledProbability is the probability that the runtime samples
// an object of size bytes: one minus the chance that none of its bytes is
// picked, 1 - (1 - 1/AllocationSamplingMean)^size. It is about
// size/AllocationSamplingMean for small objects and tends to 1 for objects
// far larger than the mean (an 85 KB array: 0.56; 1 MB: 0.99996).
func AllocationSampledProbability(size uint64) float64 {
	if size == 0 {
		return 0
	}
	// expm1 and log1p keep the precision that 1-(1-p)^n loses for small n.
	return -math.Expm1(float64(size) * math.Log1p(-1.0/AllocationSamplingMean))
}

// AllocationEstimate adds up what AllocationSampled events say of the
// allocations they were drawn from, by the estimator of the runtime's
// design (docs/design/features/RandomizedAllocationSampling.md in
// dotnet/runtime, "weighted samples"), extended to a consumer that keeps
// each event only with a probability of its own (keep).
//
// An allocated object of s bytes ends up among the samples with
// probability π(s) = keep × AllocationSampledProbability(s). Counting each
// sample as 1/π(s) objects and s/π(s) bytes gives estimates whose
// expectation is exactly the objects and bytes allocated (each object
// contributes s/π(s) with probability π(s) and 0 otherwise), whatever the
// mix of sizes, and for any set of objects chosen without looking at the
// sampling (one thread, a time window, a type, a stack): estimates of
// parts add up to the estimate of the whole.
//
// The estimate of the bytes has variance V = Σ s²(1-π(s))/π(s) over every
// object allocated (objects are sampled independently of one another). V
// is estimated without bias from the samples alone by Σ s²(1-π(s))/π(s)²
// ([AllocationEstimate.Variance]); with many samples the estimate is
// nearly normal, so it lies within k·√V of the truth but with the
// probability of a normal k-sigma event (k = 4: 1 in 16,000; 5: 1 in
// 1.7 million). With keep = 1 the variance per byte allocated,
// s·(1-π(s))/π(s), is largest for the smallest objects and never above
// AllocationSamplingMean - 1, so V ≤ N·(AllocationSamplingMean-1) for N
// bytes allocated: the relative standard error is at most about
// 1/√(samples expected), e.g. 3.2% for 100 MB (about 1,000 samples). With
// keep < 1 large objects cost more (a kept sample of a huge object stands
// for 1/keep of them), and V has no bound in N alone: use Variance.
type AllocationEstimate struct {
	// Samples is the number of samples added.
	Samples int64
	// Objects and Bytes are the estimates of the objects and bytes
	// allocated.
	Objects, Bytes float64
	// Variance is the unbiased estimate of the variance of Bytes.
	Variance float64
}

// Add adds one sample of an object of size bytes, kept by the consumer
// with probability keep (1 when every event is used), and returns what
// the sample stands for: objects (1/π) and bytes (size/π). A size of 0 or
// a keep outside (0, 1] adds nothing and returns zeros.
func (e *AllocationEstimate) Add(size uint64, keep float64) (objects, bytes float64) {
	pi := keep * AllocationSampledProbability(size)
	if !(keep > 0 && keep <= 1) || pi <= 0 {
		return 0, 0
	}
	s := float64(size)
	objects, bytes = 1/pi, s/pi
	e.Samples++
	e.Objects += objects
	e.Bytes += bytes
	e.Variance += s * s * (1 - pi) / (pi * pi)
	return objects, bytes
}

// Merge adds the samples of o to e.
func (e *AllocationEstimate) Merge(o AllocationEstimate) {
	e.Samples += o.Samples
	e.Objects += o.Objects
	e.Bytes += o.Bytes
	e.Variance += o.Variance
}

// StdErr is the estimated standard error of Bytes, √Variance.
func (e *AllocationEstimate) StdErr() float64 { return math.Sqrt(e.Variance) }

// AllocationVariance is the variance V = Σ s²(1-π(s))/π(s) that the
// estimate of the bytes of count objects of size bytes each has, when
// each sample is kept with probability keep: what a test that knows the
// objects it allocated compares the estimate with.
func AllocationVariance(size, count uint64, keep float64) float64 {
	pi := keep * AllocationSampledProbability(size)
	if pi <= 0 || count == 0 {
		return 0
	}
	s := float64(size)
	return float64(count) * s * s * (1 - pi) / pi
}
