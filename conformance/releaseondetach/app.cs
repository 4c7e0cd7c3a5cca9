// The app of the releaseondetach scenario: it says it is ready and waits
// for a line on its standard input, which the test writes once the
// profiler it attached has detached and been released.
using System;

static class ReleaseOnDetachApp {
    static int Main() {
        Console.WriteLine("ready");
        Console.Out.Flush();
        string line = Console.ReadLine();
        Console.WriteLine("app told: {0}", line);
        return 100;
    }
}
