// The app of the gcbasic scenario: one thread grows a large array a hundred
// times, three times over, so that the runtime collects garbage many times.
using System;
using System.Threading;

static class GCBasicApp {
    static void Work() {
        for (int round = 0; round < 3; round++) {
            Console.WriteLine("round {0}", round);
            int[] big = new int[1000000];
            for (int i = 0; i <= 100; i++) {
                big = new int[big.Length + 100000];
            }
            GC.KeepAlive(big);
        }
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
