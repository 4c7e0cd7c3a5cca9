// Command relprof is the profiler of TestReleased: it prints (on stderr)
// when Shutdown runs and when the runtime releases the profiler object.
package main

import (
	"fmt"
	"os"

	"github.com/clrprof/clrprof/profiler"
)

type relprof struct{ profiler.Base }

func (relprof) Initialize(*profiler.Info) error { return nil }

func (relprof) Shutdown() error {
	fmt.Fprintln(os.Stderr, "relprof: shutdown")
	return nil
}

func (relprof) Released() { fmt.Fprintln(os.Stderr, "relprof: released") }

func init() {
	profiler.Register("{0B5E7D93-1A2C-4E68-8F47-6D9C3B1A2E11}", relprof{})
}

func main() {}
