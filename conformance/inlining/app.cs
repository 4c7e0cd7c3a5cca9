// The app of the inlining scenario: three callers of the same small,
// aggressively inlined method. The profiler lets the JIT inline it into
// Inlining, refuses it in BlockInlining, and says nothing for NoResponse.
using System;
using System.Runtime.CompilerServices;

static class InliningApp {
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    static int Inlinee() {
        return Environment.TickCount & 0xff;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Inlining() {
        Console.WriteLine("Inlining {0}", Inlinee());
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void BlockInlining() {
        Console.WriteLine("BlockInlining {0}", Inlinee());
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void NoResponse() {
        Console.WriteLine("NoResponse {0}", Inlinee());
    }

    static int Main() {
        Inlining();
        BlockInlining();
        NoResponse();
        return 100;
    }
}
