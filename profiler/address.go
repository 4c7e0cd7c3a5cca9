package profiler

import "github.com/clrprof/clrprof/metadata"

// Address is an address in the profiled process (instruction pointers,
// native code, module bases, static field storage). It is the same type as
// metadata.Address.
type Address = metadata.Address
