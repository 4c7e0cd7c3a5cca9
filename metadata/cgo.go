package metadata

// #cgo CFLAGS: -I${SRCDIR}/../internal/include -Wall -Wextra -Wno-unused-parameter -Wno-unused-function
import "C"

import "github.com/clrprof/clrprof/internal/com"

// Unknown wraps an IUnknown pointer. Owned values must be released.
type Unknown = com.Unknown

// Object is any wrapper of a COM pointer (Unknown and every interface
// wrapper); the Query functions accept one.
type Object = com.Object
