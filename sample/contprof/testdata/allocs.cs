// The app of TestContprofAllocations: on its main thread it allocates
// known amounts in four methods, each measured with
// GC.GetAllocatedBytesForCurrentThread around it, and prints what it
// counted: Allocs.Items N objects of class Item (48 bytes), Allocs.Arrays
// N byte[1000] (1024 bytes), Allocs.Large N byte[150000] (150024 bytes,
// large object heap), each dropped at once; Allocs.Retain N Items kept in
// a static list to the end (and the list's array). Then it collects twice
// and prints "allocs: done". The first argument scales the counts.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;

class Item {
    public long A, B, C;
    public object D;
}

static class Allocs {
    static object sink;
    static List<Item> kept;

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Items(int n) {
        for (int i = 0; i < n; i++) sink = new Item();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Arrays(int n) {
        for (int i = 0; i < n; i++) sink = new byte[1000];
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Large(int n) {
        for (int i = 0; i < n; i++) sink = new byte[150000];
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Retain(int n) {
        kept = new List<Item>(n);
        for (int i = 0; i < n; i++) kept.Add(new Item());
    }

    static void Report(string name, int count, long bytes) {
        Console.WriteLine("allocs: " + name + " count=" + count + " bytes=" + bytes);
    }

    static void Main(string[] args) {
        int scale = args.Length > 0 ? int.Parse(args[0]) : 1;
        // Warm up: the methods are compiled (and their first allocations
        // made) before they are measured.
        Items(10); Arrays(10); Large(1); Retain(10);
        int items = 3000000 * scale, arrays = 100000 * scale, large = 300 * scale, retained = 1000000 * scale;
        long t0 = GC.GetAllocatedBytesForCurrentThread();
        Items(items);
        long t1 = GC.GetAllocatedBytesForCurrentThread();
        Arrays(arrays);
        long t2 = GC.GetAllocatedBytesForCurrentThread();
        Large(large);
        long t3 = GC.GetAllocatedBytesForCurrentThread();
        Retain(retained);
        long t4 = GC.GetAllocatedBytesForCurrentThread();
        Report("Items", items, t1 - t0);
        Report("Arrays", arrays, t2 - t1);
        Report("Large", large, t3 - t2);
        Report("Retain", retained, t4 - t3);
        sink = null;
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        Console.WriteLine("allocs: done retained=" + kept.Count + " on " + Environment.Version);
    }
}
