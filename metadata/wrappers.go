package metadata

import "github.com/clrprof/clrprof/internal/com"

// HRESULT is the COM status code that failed calls return as their error;
// it is the same type as profiler.HRESULT.
type HRESULT = com.HRESULT

// EnumHandle is the runtime's HCORENUM: the state of an enumeration across
// calls of an Enum method. Pass the address of a zero EnumHandle to the
// first call and close it with the interface's CloseEnum when done.
type EnumHandle uintptr
