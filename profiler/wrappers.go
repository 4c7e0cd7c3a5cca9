package profiler

import "github.com/clrprof/clrprof/internal/com"

// Unknown wraps an IUnknown pointer returned by the runtime, such as the
// metadata interface of GetModuleMetaData. Owned values must be released.
type Unknown = com.Unknown

// Object is any wrapper of a COM pointer (Unknown and every interface
// wrapper); the Query functions accept one.
type Object = com.Object
