package profiler

// The bindings of this package and of package metadata are generated from
// corprof.idl, cor.h, corhdr.h and corerror.h. CLRPROF_IDL names the input
// directory (../shared/idl in this repository's CI); `comgen fetch` fills a
// cache with the pinned inputs otherwise.
//
//go:generate go run ../cmd/comgen -root .. -w
