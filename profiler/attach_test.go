package profiler

import (
	"errors"
	"strings"
	"testing"
)

// The allowed sets are the runtime's; diag's integration test
// TestAttachEventMask checks them flag by flag against .NET Core 3.1 and
// .NET 8. Here: the tables agree with the generated constants where the
// IDL defines them, and the checks use them.
func TestAttachAllowed(t *testing.T) {
	low, high := AttachAllowed(10)
	if low != AllowableAfterAttach {
		t.Errorf(".NET 10 low set %v, want the IDL's COR_PRF_ALLOWABLE_AFTER_ATTACH %v", low, AllowableAfterAttach)
	}
	if high != HighAllowableAfterAttach {
		t.Errorf(".NET 10 high set %v, want the IDL's %v", high, HighAllowableAfterAttach)
	}
	for _, tc := range []struct {
		major    int
		lowHex   uint32
		highHex  uint32
		lacksLow Monitor
	}{
		{3, 0x100502fe, 0x76, DisableInlining | DisableOptimizations},
		{5, 0x100502fe, 0xf6, DisableInlining},
		{8, 0x100502fe, 0xf6, DisableOptimizations},
		{10, 0x106502fe, 0xf6, 0},
	} {
		low, high := AttachAllowed(tc.major)
		if uint32(low) != tc.lowHex || uint32(high) != tc.highHex {
			t.Errorf(".NET %d: %#x %#x, want %#x %#x", tc.major, uint32(low), uint32(high), tc.lowHex, tc.highHex)
		}
		if low&tc.lacksLow != 0 {
			t.Errorf(".NET %d allows %v", tc.major, low&tc.lacksLow)
		}
	}
}

func TestCheckAttachMask(t *testing.T) {
	if err := CheckAttachMask(8, MonitorJITCompilation|MonitorGC|EnableStackSnapshot, HighEventPipe); err != nil {
		t.Fatal(err)
	}
	if err := CheckAttachMask(3, 0, 0); err != nil {
		t.Fatal(err)
	}
	err := CheckAttachMask(8, MonitorJITCompilation|MonitorEnterLeave|EnableObjectAllocated, HighEventPipe|HighDisableTieredCompilation)
	var me *AttachMaskError
	if !errors.As(err, &me) {
		t.Fatalf("%v", err)
	}
	if me.Low != MonitorEnterLeave|EnableObjectAllocated || me.High != HighDisableTieredCompilation || me.Major != 8 {
		t.Errorf("%+v", me)
	}
	if !errors.Is(err, CORPROF_E_UNSUPPORTED_FOR_ATTACHING_PROFILER) {
		t.Error("does not match CORPROF_E_UNSUPPORTED_FOR_ATTACHING_PROFILER")
	}
	msg := err.Error()
	for _, want := range []string{"may not set MonitorEnterLeave|EnableObjectAllocated|HighDisableTieredCompilation on this runtime (.NET 8)", "allowed after attach: MonitorClassLoads|", "|HighEventPipe:", "CORPROF_E_UNSUPPORTED_FOR_ATTACHING_PROFILER"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	// EventPipe events after attach came with .NET 5.
	if err := CheckAttachMask(3, 0, HighEventPipe); err == nil {
		t.Error(".NET Core 3 allowed HighEventPipe")
	}
}

func TestRuntimeMajor(t *testing.T) {
	for _, tc := range []struct {
		ri   RuntimeInformationResult
		want int
	}{
		{RuntimeInformationResult{MajorVersion: 4, MinorVersion: 0, BuildNumber: 30319, VersionString: "v4.0.30319"}, 3}, // .NET Core 3.1
		{RuntimeInformationResult{MajorVersion: 8, VersionString: "8.0.4"}, 8},
		{RuntimeInformationResult{MajorVersion: 10}, 10},
	} {
		if got := runtimeMajor(tc.ri); got != tc.want {
			t.Errorf("%+v: %d, want %d", tc.ri, got, tc.want)
		}
	}
}

func TestRequestDetachWithoutInfo(t *testing.T) {
	// An Info without ICorProfilerInfo3 answers with an error, through the
	// channel, without panicking.
	err := <-(&Info{}).RequestDetach(0)
	if !errors.Is(err, ErrNotAvailable) {
		t.Errorf("%v", err)
	}
}
