//go:build clrprof_testhooks

package sigguard

import "testing"

// The tests of this package's C through its test hooks (task test-c runs
// them under AddressSanitizer and UBSan too).

// TestSegvRouterPrivateStack checks the SIGSEGV router's private-stack path
// by itself (the storm tests check it inside real runtimes): a fault handed
// to a stand-in host handler must run it on the thread's private stack with
// a copy of the kernel's frame (context, signal information, 64-byte aligned
// extended state), and when the handler returns, the thread must resume
// from that copy: with the general register the handler changed, past the
// instruction it skipped, and with the vector register the handler
// clobbered restored from the saved extended state, although the handler
// also overwrote the top of the alternate stack (as a SIGURG would).
func TestSegvRouterPrivateStack(t *testing.T) {
	before := SegvCounts()
	const rounds = 100
	for i := 0; i < rounds; i++ {
		res, rcx, xmm := SegvRoundTrip()
		if res != 1 {
			t.Fatalf("round %d: the stand-in handler reported %d (-1: not on the private stack, -2: frame not copied, -3: extended state not copied or misaligned, -4: wrong signal information, -5: no alternate stack, 0: never called, <= -10: setup failed)", i, res)
		}
		if rcx != 0x5eed {
			t.Fatalf("round %d: rcx = %#x after the fault, want 0x5eed (the context the handler changed was not the one resumed)", i, rcx)
		}
		if xmm != 0x4142434445464748 {
			t.Fatalf("round %d: xmm1 = %#x after the fault, want 0x4142434445464748 (extended state not restored from the frame)", i, xmm)
		}
	}
	after := SegvCounts()
	if after.Private-before.Private != rounds || after.Returned-before.Returned != rounds {
		t.Errorf("router counts: %d on the private stack, %d returned; want %d each", after.Private-before.Private, after.Returned-before.Returned, rounds)
	}
}

// The audit clears the SA_ONSTACK of the activation signal's handler and
// leaves its other flags, and every other signal, alone; a second audit
// finds nothing to do. (profiler's TestSignalAudit checks its logging.)
func TestAuditClearsOnStack(t *testing.T) {
	sig := SigRTMin() + 7
	const saRestart, saSiginfo = 0x10000000, 0x4
	if rc := SwapHandler(sig, SAOnStack()|saRestart); rc != 0 {
		t.Fatalf("sigaction: %d", rc)
	}
	defer RestoreHandler(sig)
	other := SigRTMin() + 8
	otherBefore := SigFlags(other)

	var rec *Record
	recs := Audit(sig)
	for i := range recs {
		if recs[i].Sig == sig {
			rec = &recs[i]
		}
		if recs[i].Sig == other && recs[i].Action != Seen {
			t.Errorf("signal %d (not the activation signal) was changed: %+v", other, recs[i])
		}
	}
	if rec == nil {
		t.Fatalf("audit did not record signal %d: %+v", sig, recs)
	}
	if rec.Action != Restored || rec.Flags&SAOnStack() == 0 || rec.NewFlags&SAOnStack() != 0 || rec.Ignored || rec.Handler == 0 {
		t.Fatalf("audit record %+v: want SA_ONSTACK cleared (Restored)", *rec)
	}
	now := SigFlags(sig)
	if now&SAOnStack() != 0 || now&saRestart == 0 || now&saSiginfo == 0 {
		t.Errorf("flags after the audit %#x: want SA_ONSTACK cleared, SA_RESTART and SA_SIGINFO kept", now)
	}
	if got := SigFlags(other); got != otherBefore {
		t.Errorf("flags of signal %d changed from %#x to %#x", other, otherBefore, got)
	}
	for _, r := range Audit(sig) {
		if r.Sig == sig && r.Action != Seen {
			t.Errorf("second audit acted again: %+v", r)
		}
	}
}
