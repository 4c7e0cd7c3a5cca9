package profiler

import (
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/clrprof/clrprof/internal/sigguard"
)

// WithGoEnvironment keeps the Go runtime settings that the process
// environment gives: GOGC, GOMEMLIMIT, GOMAXPROCS and GOTRACEBACK. Without
// it, Register puts them back to Go's defaults, because the variables
// belong to the application being profiled (a Go-aware host or a container
// image may set them for other reasons) and should not steer the profiler.
// GODEBUG cannot be undone after start-up; Register logs a warning when it
// is set.
func WithGoEnvironment() Option {
	return func(o *options) { o.followGoEnv = true }
}

// goEnvVars are the variables resetGoSettings undoes.
var goEnvVars = []string{"GOGC", "GOMEMLIMIT", "GOMAXPROCS", "GOTRACEBACK"}

// resetGoSettings gives the Go runtime its default settings where the
// environment changed them, and logs what it did.
func resetGoSettings(log *slog.Logger) {
	var reset []string
	for _, v := range goEnvVars {
		if val, ok := os.LookupEnv(v); ok {
			reset = append(reset, v+"="+val)
		}
	}
	if _, ok := os.LookupEnv("GOGC"); ok {
		debug.SetGCPercent(100)
	}
	if _, ok := os.LookupEnv("GOMEMLIMIT"); ok {
		debug.SetMemoryLimit(math.MaxInt64)
	}
	if _, ok := os.LookupEnv("GOMAXPROCS"); ok {
		runtime.SetDefaultGOMAXPROCS()
	}
	if _, ok := os.LookupEnv("GOTRACEBACK"); ok {
		debug.SetTraceback("single")
	}
	if len(reset) > 0 {
		log.Info("the application's environment sets Go runtime variables; the profiler uses Go's defaults instead (profiler.WithGoEnvironment keeps them)",
			"ignored", strings.Join(reset, " "))
	}
	if v, ok := os.LookupEnv("GODEBUG"); ok && v != "" {
		log.Warn("GODEBUG is set in the application's environment and applies to the profiler's Go runtime too", "GODEBUG", v)
	}
}

// environmentError reports why this process cannot host the profiler: a C
// library other than glibc (Go's c-shared mode supports glibc only), or
// another Go runtime already loaded (two Go runtimes in one process are
// unsupported). Both were checked when the library was loaded, before its
// own Go runtime started.
func environmentError() error {
	if !sigguard.Glibc() {
		return fmt.Errorf("clrprof: the process does not use glibc; a Go profiler runs only with glibc")
	}
	if other := sigguard.OtherGoRuntime(); other != "" {
		return otherGoError(other, otherIdentity(other))
	}
	return nil
}
