// The app of package profiler's heap API test: objects of known shapes for
// heapprof to inspect (HeapProbe's fields, a two-dimensional array with
// non-zero lower bounds, a vector, and a chain of HeapNode objects whose
// references the garbage collector reports), then a full collection.
using System;

class HeapProbe {
    public long A;
    public object B;
    public int C;
}

class HeapNode {
    public HeapNode Left, Right;
    public string Tag;
}

static class HeapApp {
    static int Main() {
        var probe = new HeapProbe();
        probe.A = 7; probe.B = "b"; probe.C = 3;
        Array grid = Array.CreateInstance(typeof(int), new int[] { 2, 3 }, new int[] { 1, -1 });
        long[] vec = new long[5];
        var root = new HeapNode();
        root.Tag = "root";
        root.Left = new HeapNode();
        root.Right = new HeapNode();
        root.Left.Right = root;
        GC.Collect();
        GC.KeepAlive(probe);
        GC.KeepAlive(grid);
        GC.KeepAlive(vec);
        GC.KeepAlive(root);
        Console.WriteLine("app done");
        return 0;
    }
}
