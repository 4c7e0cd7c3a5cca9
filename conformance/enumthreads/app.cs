// The app of the enumthreads scenario: one induced collection, whose
// runtime suspension is not one the profiler asked for.
using System;

static class EnumThreadsApp {
    static int Main() {
        GC.Collect();
        Console.WriteLine("app done");
        return 100;
    }
}
