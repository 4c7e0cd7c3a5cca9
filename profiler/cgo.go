package profiler

// #cgo CFLAGS: -I${SRCDIR}/../internal/include -Wall -Wno-unused-function
import "C"
