// The app of the reverse_startup scenario: it does nothing but say that it
// ran and exit with 100. What is tested happens before Main: the runtime,
// paused at start-up by a suspending diagnostics port, is told which
// profiler to load, and loads it when resumed.
using System;

static class ReverseStartupApp {
    static int Main() {
        Console.WriteLine("app: Main runs");
        return 100;
    }
}
