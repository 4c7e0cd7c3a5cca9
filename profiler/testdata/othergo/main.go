// Command othergo is a Go shared library that is not a profiler: the
// environment test preloads it (LD_PRELOAD) so that another Go runtime is
// already in the process when the profiler loads.
package main

import "C"

//export OtherGoAnswer
func OtherGoAnswer() C.int { return 42 }

func main() {}
