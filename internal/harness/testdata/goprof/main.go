// Command goprof is a Go c-shared library that CoreCLR can load as a
// profiler library but that declines every CLSID: the harness tests use it
// to check that BuildProfiler builds a loadable Go library and passes the
// test's environment and flags to go build.
package main

/*
#include <stdint.h>

#ifndef GOPROF_MARK
#define GOPROF_MARK "unset"
#endif
static const char *goprof_mark(void) { return GOPROF_MARK; }
*/
import "C"

import (
	"fmt"
	"os"
	"unsafe"
)

// flagMark is set with -ldflags=-X main.flagMark=...
var flagMark = "unset"

const classENotAvailable = -2147221231 // CLASS_E_CLASSNOTAVAILABLE, 0x80040111

//export DllGetClassObject
func DllGetClassObject(rclsid, riid unsafe.Pointer, ppv *unsafe.Pointer) C.int32_t {
	if ppv != nil {
		*ppv = nil
	}
	fmt.Fprintf(os.Stderr, "goprof: DllGetClassObject cgo-mark=%s flag-mark=%s\n", C.GoString(C.goprof_mark()), flagMark)
	return classENotAvailable
}

func main() {}
