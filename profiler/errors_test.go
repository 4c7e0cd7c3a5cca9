package profiler

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestToHRESULT(t *testing.T) {
	cases := []struct {
		err  error
		want HRESULT
	}{
		{nil, S_OK},
		{S_OK, S_OK},
		{S_FALSE, S_FALSE},
		{E_INVALIDARG, E_INVALIDARG},
		{fmt.Errorf("ctx: %w", E_NOINTERFACE), E_NOINTERFACE},
		{fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", CLASS_E_NOAGGREGATION)), CLASS_E_NOAGGREGATION},
		{errors.Join(io.EOF, E_NOTIMPL), E_NOTIMPL},
		{io.EOF, E_FAIL},
		{errors.New("x"), E_FAIL},
		{notAvailable("ICorProfilerInfo10.SuspendRuntime", 10, 9), E_NOINTERFACE},
	}
	for _, c := range cases {
		if got := HRESULT(toHRESULT(c.err)); got != c.want {
			t.Errorf("toHRESULT(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestHRESULTErrorsIs(t *testing.T) {
	err := fmt.Errorf("GetFunctionInfo: %w", E_INVALIDARG)
	if !errors.Is(err, E_INVALIDARG) {
		t.Error("errors.Is through %w failed")
	}
	if errors.Is(err, E_FAIL) {
		t.Error("errors.Is matched a different HRESULT")
	}
	if !E_FAIL.Failed() || E_FAIL.Succeeded() || !S_FALSE.Succeeded() || S_FALSE.Failed() {
		t.Error("Failed/Succeeded wrong")
	}
	if s := E_NOINTERFACE.Error(); !strings.Contains(s, "E_NOINTERFACE") || !strings.Contains(s, "80004002") {
		t.Errorf("E_NOINTERFACE.Error() = %q", s)
	}
	if s := HRESULT(-0x7ffffff0).Error(); !strings.Contains(s, "80000010") {
		t.Errorf("unnamed HRESULT: %q", s)
	}
}

func TestNotAvailable(t *testing.T) {
	err := notAvailable("ICorProfilerInfo10.SuspendRuntime", 10, 9)
	wrapped := fmt.Errorf("sampler: %w", err)
	if !errors.Is(wrapped, ErrNotAvailable) {
		t.Error("not ErrNotAvailable")
	}
	if !errors.Is(wrapped, E_NOINTERFACE) {
		t.Error("not E_NOINTERFACE")
	}
	if errors.Is(wrapped, E_FAIL) {
		t.Error("matches E_FAIL")
	}
	var nae *NotAvailableError
	if !errors.As(wrapped, &nae) || nae.Need != 10 || nae.Have != 9 {
		t.Errorf("errors.As: %+v", nae)
	}
	want := "ICorProfilerInfo10.SuspendRuntime: not available on this runtime (needs ICorProfilerInfo10, runtime has ICorProfilerInfo9)"
	if err.Error() != want {
		t.Errorf("Error() = %q\nwant      %q", err.Error(), want)
	}
	if s := notAvailable("ICorProfilerInfo2.DoStackSnapshot", 2, 1).Error(); !strings.HasSuffix(s, "runtime has ICorProfilerInfo)") {
		t.Errorf("version 1 spelled %q", s)
	}
}
