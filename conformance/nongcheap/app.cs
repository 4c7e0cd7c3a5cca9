// The app of the nongcheap scenario: a method, compiled when first called,
// that uses six string literals. From .NET 8 the JIT allocates such
// literals on the non-GC (frozen) heap, and the runtime reports each with
// ObjectAllocated. Then one induced collection.
using System;
using System.Runtime.CompilerServices;

static class NonGCHeapApp {
    [MethodImpl(MethodImplOptions.NoInlining)]
    static void UseLiterals() {
        Consume("nongc literal 1");
        Consume("nongc literal 2");
        Consume("nongc literal 3");
        Consume("nongc literal 4");
        Consume("nongc literal 5");
        Consume("nongc literal 6");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Consume(object o) { }

    static int Main() {
        UseLiterals();
        GC.Collect();
        Console.WriteLine("app done");
        return 100;
    }
}
