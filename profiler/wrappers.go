package profiler

import "github.com/clrprof/clrprof/internal/com"

// Unknown wraps an IUnknown pointer returned by the runtime, such as the
// metadata interface of GetModuleMetaData. Owned values must be released.
type Unknown = com.Unknown
