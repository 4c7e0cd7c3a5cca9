package bench_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/clrprof/clrprof/bench"
	"github.com/clrprof/clrprof/internal/harness"
)

// collectCorpus runs bench/prof/corpus over the startup workload on rt
// with ReadyToRun disabled and returns what it collected.
func collectCorpus(tb testing.TB, rt harness.Runtime) (*bench.Corpus, error) {
	lib := harness.BuildProfiler(tb, "./bench/prof/corpus")
	app := workloadApp(tb, rt, "workloads/startup.cs", "System.Core.dll")
	file := filepath.Join(tb.TempDir(), "corpus")
	res := harness.Run(tb, rt, app, harness.RunOptions{
		ProfilerPath: lib, ProfilerCLSID: "{7F2C4A98-1E6B-4D35-A8C7-3B9E5D1F2A64}",
		DisableReadyToRun: true, Env: []string{"BENCH_CORPUS=" + file},
	})
	if !res.Succeeded() || !strings.Contains(res.Stderr, "gocorpus: Shutdown") {
		return nil, fmt.Errorf("corpus collection failed:\n%s", res.Describe())
	}
	return bench.LoadCorpus(file)
}

var (
	corpusOnce   sync.Once
	corpusShared *bench.Corpus
	corpusErr    error
)

// benchCorpus is the corpus of the Go benchmarks: the file named by
// CLRPROF_BENCH_CORPUS, or one collected on the newest runtime.
func benchCorpus(b *testing.B) *bench.Corpus {
	corpusOnce.Do(func() {
		if f := os.Getenv("CLRPROF_BENCH_CORPUS"); f != "" {
			corpusShared, corpusErr = bench.LoadCorpus(f)
			return
		}
		rts, err := harness.Runtimes()
		if err != nil || len(rts) == 0 {
			corpusErr = fmt.Errorf("no runtime to collect a corpus on: %v", err)
			return
		}
		corpusShared, corpusErr = collectCorpus(b, rts[len(rts)-1])
	})
	if corpusErr != nil {
		b.Fatal(corpusErr)
	}
	return corpusShared
}

func BenchmarkILDecode(b *testing.B) { bench.BenchILDecode(b, benchCorpus(b)) }

func BenchmarkILEncode(b *testing.B) { bench.BenchILEncode(b, benchCorpus(b)) }

func BenchmarkILRoundTrip(b *testing.B) { bench.BenchILRoundTrip(b, benchCorpus(b)) }

func BenchmarkILRoundTripReuse(b *testing.B) { bench.BenchILRoundTripReuse(b, benchCorpus(b)) }

func BenchmarkSigDecode(b *testing.B) { bench.BenchSigDecode(b, benchCorpus(b)) }

func BenchmarkSigDecodeReuse(b *testing.B) { bench.BenchSigDecodeReuse(b, benchCorpus(b)) }

func BenchmarkSigEncode(b *testing.B) { bench.BenchSigEncode(b, benchCorpus(b)) }
