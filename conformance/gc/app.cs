// The app of the gc scenario (and of gcskipobjectsallocatedbyclass): 10000
// small arrays, about half of them on the pinned object heap where the
// runtime has one (.NET 5 and later; GC.AllocateArray is reached by
// reflection because mcs compiles against Mono's mscorlib), kept in 1024
// random slots of a root array, with an induced collection every 1000.
using System;
using System.Reflection;

class AllocObject {
    public const int ArraySize = 100;
    static MethodInfo allocatePinned = PinnedAllocator();
    int[] array;

    static MethodInfo PinnedAllocator() {
        MethodInfo m = typeof(GC).GetMethod("AllocateArray", BindingFlags.Public | BindingFlags.Static);
        return m == null ? null : m.MakeGenericMethod(typeof(int));
    }

    public static bool HasPinnedHeap { get { return allocatePinned != null; } }

    public static int[] NewArray(bool pinned) {
        if (pinned && allocatePinned != null) {
            return (int[])allocatePinned.Invoke(null, new object[] { ArraySize, true });
        }
        return new int[ArraySize];
    }

    public AllocObject(bool pinned) {
        array = NewArray(pinned);
    }
}

static class GCApp {
    static int Main() {
        int[] root1 = AllocObject.NewArray(true);
        int[] root2 = AllocObject.NewArray(true);
        var objs = new AllocObject[1024];
        var rand = new Random(12345);
        int pinned = 0, regular = 0;
        for (int i = 0; i < 10000; i++) {
            bool poh = rand.NextDouble() > 0.5;
            objs[rand.Next(0, objs.Length)] = new AllocObject(poh);
            if (poh) {
                pinned++;
            } else {
                regular++;
            }
            if (i % 1000 == 0) {
                GC.Collect();
                Console.WriteLine("did {0} iterations", i);
            }
            int[] garbage = new int[100];
            GC.KeepAlive(garbage);
        }
        Console.WriteLine("pinned heap: {0}; {1} pinned and {2} regular allocations", AllocObject.HasPinnedHeap, pinned, regular);
        GC.KeepAlive(root1);
        GC.KeepAlive(root2);
        GC.KeepAlive(objs);
        return 100;
    }
}
