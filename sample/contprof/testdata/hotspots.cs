// The app of TestContprof, with known hot spots: Hot.Spin burns CPU;
// Hot.Sleeper sleeps the whole run; four threads take turns in
// Hot.HoldLock, which holds a lock 20 ms at a time (the others wait);
// Hot.Thrower throws 200 InvalidOperationExceptions (Hot.RareThrower 20
// ArgumentExceptions); Hot.Retain keeps about 16 MB of byte[4000] in a
// static list for the whole run, Hot.Temporary about 8 MB in another list
// that is cleared after 2.5 s (then the app collects twice), and
// Hot.Churn allocates and drops 100 MB. It prints "phase: dropped" when it
// clears the temporary list and runs for 5 s in all.
using System;
using System.Collections.Generic;
using System.Threading;

static class Hot {
    static readonly object Gate = new object();
    static readonly List<byte[]> Kept = new List<byte[]>();
    static List<byte[]> TempList = new List<byte[]>();
    static volatile bool done;
    static long sink;

    static void Spin() {
        long x = 0;
        while (!done) {
            for (int i = 0; i < 100000; i++) x += i ^ (x >> 3);
        }
        sink = x;
    }

    static void Sleeper() {
        Thread.Sleep(60000);
    }

    static void HoldLock() {
        while (!done) {
            lock (Gate) {
                Thread.Sleep(20);
            }
        }
    }

    static void Thrower(int i) {
        throw new InvalidOperationException("hot " + i);
    }

    static void RareThrower(int i) {
        throw new ArgumentException("rare " + i);
    }

    static void Retain() {
        for (int i = 0; i < 4000; i++) Kept.Add(new byte[4000]);
    }

    static void Temporary() {
        for (int i = 0; i < 2000; i++) TempList.Add(new byte[4000]);
    }

    static void Churn() {
        for (int i = 0; i < 25000; i++) {
            var b = new byte[4000];
            sink += b.Length;
        }
    }

    static int Main() {
        var sleeper = new Thread(Sleeper);
        sleeper.IsBackground = true;
        sleeper.Start();
        var spinner = new Thread(Spin);
        spinner.Start();
        var lockers = new List<Thread>();
        for (int i = 0; i < 4; i++) {
            var t = new Thread(HoldLock);
            t.Start();
            lockers.Add(t);
        }
        Retain();
        Temporary();
        for (int i = 0; i < 200; i++) {
            try { Thrower(i); } catch (InvalidOperationException) {}
            if (i % 10 == 0) {
                try { RareThrower(i); } catch (ArgumentException) {}
            }
        }
        Churn();
        Thread.Sleep(2500);
        TempList = new List<byte[]>();
        GC.Collect();
        GC.Collect();
        Console.WriteLine("phase: dropped");
        Thread.Sleep(2500);
        done = true;
        spinner.Join();
        foreach (var t in lockers) t.Join();
        GC.KeepAlive(Kept);
        Console.WriteLine("app done");
        return 0;
    }
}
