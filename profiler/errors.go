package profiler

import (
	"errors"
	"fmt"
)

// HRESULT (package internal/com, aliased here) implements error and is
// comparable: a failed runtime call returns its HRESULT as the error, and a
// callback may return one to choose what the runtime sees.

// ErrNotAvailable is matched (errors.Is) by the error an Info method returns
// when the runtime does not implement the ICorProfilerInfoN interface that
// declares it. Such an error also matches E_NOINTERFACE.
var ErrNotAvailable = errors.New("not available on this runtime")

// NotAvailableError is the error returned by an Info method whose interface
// the runtime does not implement.
type NotAvailableError struct {
	Method string // e.g. "ICorProfilerInfo10.SuspendRuntime"
	Need   int    // the ICorProfilerInfoN version that declares Method
	Have   int    // the highest version the runtime implements
}

// Error names the method, the interface version it needs and the
// version the runtime has.
func (e *NotAvailableError) Error() string {
	return fmt.Sprintf("%s: %v (needs ICorProfilerInfo%s, runtime has ICorProfilerInfo%s)",
		e.Method, ErrNotAvailable, versionSuffix(e.Need), versionSuffix(e.Have))
}

// Is reports whether target is ErrNotAvailable.
func (e *NotAvailableError) Is(target error) bool { return target == ErrNotAvailable }

// Unwrap returns E_NOINTERFACE, the HRESULT a COM caller would have seen.
func (e *NotAvailableError) Unwrap() error { return E_NOINTERFACE }

// notAvailable is the error for generated Info wrappers: method is declared
// by ICorProfilerInfo<need>, the runtime implements up to <have>.
func notAvailable(method string, need, have int) error {
	return &NotAvailableError{Method: method, Need: need, Have: have}
}

func versionSuffix(v int) string {
	if v <= 1 {
		return ""
	}
	return fmt.Sprint(v)
}

// toHRESULT maps a callback's error to the HRESULT returned to the runtime:
// nil is S_OK, an HRESULT anywhere in the chain (errors.As) is itself, and
// any other error is E_FAIL.
func toHRESULT(err error) int32 {
	if err == nil {
		return int32(S_OK)
	}
	var h HRESULT
	if errors.As(err, &h) {
		return int32(h)
	}
	return int32(E_FAIL)
}
