// The app of package profiler's GC heap walk and high-flag tests.
//
// It keeps exactly Kept objects of class HeapCounted alive in an array,
// makes others of the same class garbage (in a method of their own, so no
// stack slot of Main still holds one), and collects until they are gone.
// With the argument "wait" it then creates gcheap.ready in its working
// directory and waits (up to a minute) for the profiler to create
// gcheap.done; it prints what it did and "app done".
using System;
using System.IO;
using System.Runtime.CompilerServices;
using System.Threading;

class HeapCounted {
    public int N;
}

static class GCHeapApp {
    const int Kept = 1234;

    [MethodImpl(MethodImplOptions.NoInlining)]
    static int MakeGarbage(int n) {
        int sum = 0;
        for (int i = 0; i < n; i++) {
            var g = new HeapCounted();
            g.N = i;
            sum += g.N;
        }
        return sum;
    }

    static int Main(string[] args) {
        var kept = new HeapCounted[Kept];
        for (int i = 0; i < Kept; i++) {
            kept[i] = new HeapCounted();
            kept[i].N = i;
        }
        MakeGarbage(5000);
        for (int i = 0; i < 3; i++) {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        Console.WriteLine("kept " + kept.Length + " HeapCounted");
        if (args.Length > 0 && args[0] == "wait") {
            File.WriteAllText("gcheap.ready", "");
            int waited = 0;
            while (!File.Exists("gcheap.done") && waited < 6000) {
                Thread.Sleep(10);
                waited++;
            }
            Console.WriteLine(File.Exists("gcheap.done") ? "profiler answered" : "no answer from the profiler");
        }
        GC.KeepAlive(kept);
        Console.WriteLine("app done");
        return 0;
    }
}
