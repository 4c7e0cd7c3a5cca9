package profiler

// #cgo CFLAGS: -I${SRCDIR}/../internal/include -Wall -Wextra -Wno-unused-parameter -Wno-unused-function
import "C"
