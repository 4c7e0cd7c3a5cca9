// Start-up of the smallest app: prints one line and exits. Measures what
// loading a profiler adds to process start-up and shutdown.
using System;

namespace Bench
{
    public static class Empty
    {
        public static int Main() { Console.WriteLine("empty: ok"); return 0; }
    }
}
