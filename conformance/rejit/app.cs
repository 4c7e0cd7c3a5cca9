// The app of the rejit scenario: InlineeTarget is inlined into two callers
// (directly, and through another inlined method) and called through a
// delegate from a third. After TriggerReJIT the profiler recompiles
// InlineeTarget and every method that inlined it, with each string the
// recompiled methods load replaced by "Hello from profiler rejit method
// '<name>'!"; after TriggerRevert it reverts InlineeTarget alone. The app
// checks that all three ways of reaching InlineeTarget saw the new body,
// and none after the revert.
using System;
using System.Runtime.CompilerServices;
using System.Text;

static class ReJITApp {
    static StringBuilder output = new StringBuilder();
    const string Rewritten = "Hello from profiler rejit method 'InlineeTarget'!";

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void Write(string s) {
        output.AppendLine(s);
        Console.WriteLine(s);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void TriggerReJIT() { Console.WriteLine("ReJIT is requested when this method is compiled"); }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void TriggerRevert() { Console.WriteLine("revert is requested when this method is compiled"); }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void TriggerInliningChain() {
        Write("TriggerInliningChain");
        InlineeChain1();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void TriggerDirectInlining() {
        Write("TriggerDirectInlining");
        InlineeTarget("TriggerDirectInlining");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void CallMethodWithoutInlining() {
        Write("CallMethodWithoutInlining");
        Action<string> call = InlineeTarget;
        call("CallMethodWithoutInlining");
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    static void InlineeChain1() {
        Write(" InlineeChain1");
        InlineeTarget("InlineeChain1");
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static void InlineeTarget(string caller) {
        Write("  InlineeTarget called from " + caller);
    }

    static void RunAll() {
        TriggerDirectInlining();
        CallMethodWithoutInlining();
        TriggerInliningChain();
    }

    static int Count(string s, string sub) {
        int n = 0;
        for (int i = s.IndexOf(sub); i >= 0; i = s.IndexOf(sub, i + sub.Length)) {
            n++;
        }
        return n;
    }

    static int Main() {
        RunAll();
        TriggerReJIT();
        output.Clear();
        RunAll();
        int n = Count(output.ToString(), Rewritten);
        if (n != 3) {
            Console.WriteLine("FAIL: the rewritten InlineeTarget ran {0} times, want 3", n);
            return 1;
        }
        TriggerRevert();
        output.Clear();
        RunAll();
        n = Count(output.ToString(), Rewritten);
        if (n != 0) {
            Console.WriteLine("FAIL: the rewritten InlineeTarget ran {0} times after the revert, want 0", n);
            return 2;
        }
        return 100;
    }
}
