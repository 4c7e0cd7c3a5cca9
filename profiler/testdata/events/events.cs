// The app of the callback-count and exception tests. Each mode does a known
// amount of work that eventprof can count by name:
//
//   counts    loads EvLib (1 assembly, 1 module, classes EvLib.Loaded1..3),
//             JIT-compiles Ev.Jitted.M1..M7 once each, throws and catches
//             Ev.Marker exactly 5 times;
//   storm N   8 threads each throw and catch N NullReferenceExceptions and
//             N DivideByZeroExceptions (both are hardware faults: SIGSEGV
//             and SIGFPE) with allocation pressure, while a ninth thread
//             calls GC.Collect in a loop;
//   gcstorm S 8 threads allocate, throw and catch NullReferenceException
//             and DivideByZeroException for S seconds (default 2) while a
//             ninth thread calls GC.Collect every millisecond: the workload of the
//             signal storm tests;
//   churn N   N short-lived threads (64 at a time), each throwing and
//             catching one exception (a callback into the profiler on a new
//             thread), printing the process's resident memory and thread
//             count after the first tenth and at the end;
//   shutdown  8 background threads throw, catch (Ev.Marker) and allocate
//             without end;
//             Main returns after 300 ms, so the runtime shuts down (and
//             calls the profiler's Shutdown) while they still raise events;
//   overflow  unbounded recursion: a managed stack overflow.
using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace Ev
{
    public class Marker : Exception { public Marker(int i) : base("marker " + i) { } }

    public class Node { public Node Next; public int Value; }

    public static class Jitted
    {
        [MethodImpl(MethodImplOptions.NoInlining)] public static int M1(int x) { return x + 1; }
        [MethodImpl(MethodImplOptions.NoInlining)] public static int M2(int x) { return x * 2; }
        [MethodImpl(MethodImplOptions.NoInlining)] public static int M3(int x) { return x - 3; }
        [MethodImpl(MethodImplOptions.NoInlining)] public static int M4(int x) { return x ^ 4; }
        [MethodImpl(MethodImplOptions.NoInlining)] public static int M5(int x) { return x | 5; }
        [MethodImpl(MethodImplOptions.NoInlining)] public static int M6(int x) { return x & 6; }
        [MethodImpl(MethodImplOptions.NoInlining)] public static int M7(int x) { return x % 7; }
    }

    public static class Program
    {
        static volatile int zero;
        static volatile Node nothing;
        static long caught;

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int LoadLib()
        {
            return new EvLib.Loaded1().V + new EvLib.Loaded2().V + new EvLib.Loaded3().V;
        }

        static int Counts()
        {
            int sum = LoadLib();
            sum += Jitted.M1(1) + Jitted.M2(2) + Jitted.M3(3) + Jitted.M4(4) + Jitted.M5(5) + Jitted.M6(6) + Jitted.M7(7);
            int markers = 0;
            for (int i = 0; i < 5; i++)
            {
                try { throw new Marker(i); }
                catch (Marker) { markers++; }
            }
            Console.WriteLine("counts: sum=" + sum + " markers=" + markers);
            return 0;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int Deref() { return nothing.Value; }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int Divide(int x) { return x / zero; }

        static void StormThread(int n)
        {
            var keep = new Node[64];
            for (int i = 0; i < n; i++)
            {
                try { Deref(); }
                catch (NullReferenceException) { Interlocked.Increment(ref caught); }
                try { Divide(i); }
                catch (DivideByZeroException) { Interlocked.Increment(ref caught); }
                keep[i % keep.Length] = new Node { Value = i, Next = new Node() };
            }
        }

        static int Storm(int n)
        {
            var threads = new Thread[8];
            for (int t = 0; t < threads.Length; t++)
            {
                threads[t] = new Thread(() => StormThread(n));
                threads[t].Start();
            }
            bool done = false;
            var gc = new Thread(() => { while (!Volatile.Read(ref done)) { GC.Collect(); Thread.Sleep(1); } });
            gc.Start();
            foreach (var th in threads) th.Join();
            Volatile.Write(ref done, true);
            gc.Join();
            Console.WriteLine("storm: caught=" + Interlocked.Read(ref caught) + " want=" + (2L * n * threads.Length));
            return Interlocked.Read(ref caught) == 2L * n * threads.Length ? 0 : 1;
        }

        static int GCStorm(double seconds)
        {
            var until = DateTime.UtcNow.AddSeconds(seconds);
            long rounds = 0;
            var threads = new Thread[8];
            for (int t = 0; t < threads.Length; t++)
            {
                threads[t] = new Thread(() =>
                {
                    while (DateTime.UtcNow < until)
                    {
                        StormThread(50);
                        Interlocked.Increment(ref rounds);
                    }
                });
                threads[t].Start();
            }
            bool done = false;
            long collections = 0;
            // A GC.Collect storm with a 1 ms pause between collections: a
            // loop without pauses starves the allocating threads (each
            // collection suspends them) and turns the test into a
            // throughput contest.
            var gc = new Thread(() => { while (!Volatile.Read(ref done)) { GC.Collect(); collections++; Thread.Sleep(1); } });
            gc.Start();
            foreach (var th in threads) th.Join();
            Volatile.Write(ref done, true);
            gc.Join();
            Console.WriteLine("gcstorm: rounds=" + rounds + " caught=" + Interlocked.Read(ref caught) + " collections=" + collections);
            return 0;
        }

        static string ProcStatus()
        {
            string rss = "?", threads = "?";
            foreach (var line in System.IO.File.ReadAllLines("/proc/self/status"))
            {
                if (line.StartsWith("VmRSS:")) rss = line.Substring(6).Trim().Split(' ')[0];
                if (line.StartsWith("Threads:")) threads = line.Substring(8).Trim();
            }
            return "rsskb=" + rss + " threads=" + threads + " names=" + ThreadNames();
        }

        // ThreadNames counts the process's threads by name (/proc/self/task/*/comm),
        // sorted: "name*count|name*count". A thread the Go runtime starts takes
        // the name of the thread that started it.
        static string ThreadNames()
        {
            var counts = new System.Collections.Generic.SortedDictionary<string, int>(StringComparer.Ordinal);
            foreach (var dir in System.IO.Directory.GetDirectories("/proc/self/task"))
            {
                string name;
                try { name = System.IO.File.ReadAllText(dir + "/comm").Trim(); }
                catch (System.IO.IOException) { continue; } // the thread has gone
                int c;
                counts.TryGetValue(name, out c);
                counts[name] = c + 1;
            }
            var parts = new System.Collections.Generic.List<string>();
            foreach (var kv in counts) parts.Add(kv.Key + "*" + kv.Value);
            return string.Join("|", parts);
        }

        static int Churn(int n)
        {
            int done = 0;
            var batch = new Thread[64];
            while (done < n)
            {
                int k = Math.Min(batch.Length, n - done);
                for (int i = 0; i < k; i++)
                {
                    batch[i] = new Thread(() =>
                    {
                        try { throw new Marker(0); }
                        catch (Marker) { Interlocked.Increment(ref caught); }
                    });
                    batch[i].Start();
                }
                for (int i = 0; i < k; i++) batch[i].Join();
                int before = done;
                done += k;
                if (before < n / 10 && done >= n / 10)
                {
                    GC.Collect();
                    Console.WriteLine("churn: after " + done + " threads: " + ProcStatus());
                }
            }
            GC.Collect();
            Thread.Sleep(200);
            Console.WriteLine("churn: after " + done + " threads: " + ProcStatus());
            Console.WriteLine("churn: caught=" + Interlocked.Read(ref caught));
            return 0;
        }

        static int ShutdownRace()
        {
            for (int t = 0; t < 8; t++)
            {
                // Software exceptions only: .NET Core 2.x itself dies at
                // shutdown now and then when a background thread takes a
                // hardware fault (NullReference, DivideByZero) after the
                // runtime has started shutting down, profiler or not.
                var th = new Thread(() =>
                {
                    var keep = new Node[64];
                    for (int i = 0; ; i++)
                    {
                        try { throw new Marker(i); }
                        catch (Marker) { Interlocked.Increment(ref caught); }
                        keep[i % keep.Length] = new Node { Value = i };
                    }
                });
                th.IsBackground = true;
                th.Start();
            }
            Thread.Sleep(300);
            Console.WriteLine("shutdown: main returns with caught=" + Interlocked.Read(ref caught));
            return 0;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int Recurse(int depth) { return Recurse(depth + 1) + 1; }

        public static int Main(string[] args)
        {
            string mode = args.Length > 0 ? args[0] : "counts";
            switch (mode)
            {
                case "counts": return Counts();
                case "storm": return Storm(args.Length > 1 ? int.Parse(args[1]) : 1000);
                case "gcstorm": return GCStorm(args.Length > 1 ? double.Parse(args[1], System.Globalization.CultureInfo.InvariantCulture) : 2);
                case "churn": return Churn(args.Length > 1 ? int.Parse(args[1]) : 100000);
                case "shutdown": return ShutdownRace();
                case "overflow":
                    Console.WriteLine("overflow: start");
                    Console.Out.Flush();
                    return Recurse(0);
            }
            Console.WriteLine("unknown mode " + mode);
            return 2;
        }
    }
}
