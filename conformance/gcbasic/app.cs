// The app of the gcbasic scenario: one thread allocates two arrays on the
// pinned object heap (where the runtime has one: .NET 5 and later, reached
// by reflection because mcs compiles against Mono's mscorlib), then grows a
// large array a hundred times, three times over, so that the runtime
// collects garbage many times.
using System;
using System.Reflection;
using System.Threading;

static class GCBasicApp {
    // PinnedArray returns GC.<method><int>(length, pinned: true), or null
    // when the runtime has no such method.
    static object PinnedArray(string method, int length) {
        MethodInfo m = typeof(GC).GetMethod(method, BindingFlags.Public | BindingFlags.Static);
        if (m == null) {
            return null;
        }
        return m.MakeGenericMethod(typeof(int)).Invoke(null, new object[] { length, true });
    }

    static void Work() {
        object poh0 = PinnedArray("AllocateUninitializedArray", 100000);
        object poh1 = PinnedArray("AllocateArray", 200000);
        Console.WriteLine("pinned arrays: {0}", poh0 != null && poh1 != null);
        for (int round = 0; round < 3; round++) {
            Console.WriteLine("round {0}", round);
            int[] big = new int[1000000];
            for (int i = 0; i <= 100; i++) {
                big = new int[big.Length + 100000];
            }
            GC.KeepAlive(big);
        }
        GC.KeepAlive(poh0);
        GC.KeepAlive(poh1);
    }

    static int Main() {
        var t = new Thread(Work);
        t.Name = "worker";
        t.Start();
        t.Join();
        Console.WriteLine("app done");
        return 100;
    }
}
