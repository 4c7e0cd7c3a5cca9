// The app of the enumthreads scenario: one induced collection, so that the
// runtime suspends itself for a reason of its own (not the profiler's).
using System;

static class EnumThreadsApp {
    static int Main() {
        GC.Collect();
        return 100;
    }
}
