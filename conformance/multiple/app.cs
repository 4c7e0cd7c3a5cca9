// The app of the multiple scenario: it says it is ready, throws and catches
// one exception when told to (after the test attached more profilers), and
// exits when told to (once every profiler detached).
using System;

static class MultipleApp {
    static int Main() {
        Console.WriteLine("ready");
        Console.Out.Flush();
        Console.ReadLine();
        try {
            throw new InvalidOperationException("seen by every profiler");
        } catch (InvalidOperationException e) {
            Console.WriteLine("caught: {0}", e.Message);
        }
        Console.Out.Flush();
        Console.ReadLine();
        return 100;
    }
}
