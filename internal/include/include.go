// Package include holds the C headers shared by the cgo packages of clrprof
// (profiler, metadata); they add this directory to their include path.
package include
