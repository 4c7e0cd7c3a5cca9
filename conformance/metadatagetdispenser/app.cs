// The app of the metadatagetdispenser scenario: nothing to do but load a
// few modules; the profiler opens each one's file through the runtime's
// dispenser as it starts loading.
using System;
using System.Collections.Generic;
using System.Linq;

static class MetaDataGetDispenserApp {
    static int Main() {
        var squares = new List<int>();
        for (int i = 0; i < 5; i++) {
            squares.Add(i * i);
        }
        Console.WriteLine("sum {0}", squares.Sum());
        Console.WriteLine("app done");
        return 100;
    }
}
