// Command linkprof is the smallest profiler: it registers a profiler.Base
// and implements nothing. TestLinkerKeepsUnusedMethods builds it to see
// which of the SDK's exported methods the linker keeps.
package main

import "github.com/clrprof/clrprof/profiler"

type nothing struct{ profiler.Base }

func init() { profiler.Register("{5A1C0E7B-2D94-4F36-B8A1-6E3C9D2F7B40}", &nothing{}) }

func main() {}
