// The app of heapsnap/capture's integration tests: it holds some objects
// in a static field and runs briefly.
using System;
using System.Collections.Generic;

static class App
{
    static List<string> Held = new List<string>();

    static int Main()
    {
        for (int i = 0; i < 1000; i++) Held.Add("item " + i);
        GC.Collect();
        Console.WriteLine("done " + Held.Count);
        return 0;
    }
}
