// Package com holds the HRESULT type shared by packages profiler and
// metadata (each aliases it), so that errors from either compare with
// errors.Is against the same named values.
package com

import "fmt"

// HRESULT is a COM status code: negative values are failures. It implements
// error and is comparable, so errors.Is(err, CORPROF_E_...) works.
type HRESULT int32

// Error returns the symbolic name of h, if known, and its value in hex.
func (h HRESULT) Error() string {
	if name, ok := names[h]; ok {
		return fmt.Sprintf("%s (0x%08X)", name, uint32(h))
	}
	return fmt.Sprintf("HRESULT 0x%08X", uint32(h))
}

// Name returns the symbolic name of h, or "" if it has none.
func (h HRESULT) Name() string { return names[h] }

// Failed reports whether h is a failure code (severity bit set).
func (h HRESULT) Failed() bool { return h < 0 }

// Succeeded reports whether h is a success code (S_OK, S_FALSE, ...).
func (h HRESULT) Succeeded() bool { return h >= 0 }

// InsufficientBuffer is HRESULT_FROM_WIN32(ERROR_INSUFFICIENT_BUFFER), the
// answer of some methods when a caller's buffer is too small; generated
// wrappers grow the buffer and retry on it.
const InsufficientBuffer = -2147024774 // 0x8007007A
