// A long-running app to attach profilers to. It starts without any profiler
// variables, keeps a worker thread busy (LINQ, strings, dictionaries,
// allocations: work that JITs methods, and tiers them up on runtimes with
// tiered compilation), prints "ready", then obeys lines on stdin:
//
//   phase N    calls PhaseNWork, which nothing called before (so it is
//              JIT-compiled now), and prints "phase N done: <result>"
//   detach N   calls DetachMarkerN (likewise new): the test profiler asks
//              to be detached when it sees that method compiled
//   ping       prints "pong <iterations of the worker>"
//   quit       (or end of input) stops the worker, prints the worker's
//              iteration count and "app done", and exits 0
using System;
using System.Collections.Generic;
using System.Linq;
using System.Runtime.CompilerServices;
using System.Text;
using System.Threading;

static class App
{
    static volatile bool stop;
    static long iterations;

    static int Work(int n)
    {
        var squares = Enumerable.Range(1, n).Select(i => i * i).Where(i => i % 3 == 0).ToList();
        var sb = new StringBuilder();
        foreach (var s in squares) sb.Append(s).Append(',');
        var dict = new Dictionary<string, int>();
        foreach (var w in "x y z x y x".Split(' ')) dict[w] = dict.TryGetValue(w, out var c) ? c + 1 : 1;
        var junk = new byte[1024 * (1 + n % 8)];
        return sb.Length + dict.Count + junk.Length;
    }

    static void Worker()
    {
        int i = 0;
        while (!stop)
        {
            Work(50 + i % 50);
            i++;
            Interlocked.Increment(ref iterations);
            if (i % 64 == 0) Thread.Sleep(1);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static string Phase1Work() { return string.Join("-", Enumerable.Range(1, 3).Select(i => "one" + i)); }
    [MethodImpl(MethodImplOptions.NoInlining)]
    static string Phase2Work() { return string.Join("-", Enumerable.Range(1, 3).Select(i => "two" + i)); }
    [MethodImpl(MethodImplOptions.NoInlining)]
    static string Phase3Work() { return string.Join("-", Enumerable.Range(1, 3).Select(i => "three" + i)); }
    [MethodImpl(MethodImplOptions.NoInlining)]
    static string Phase4Work() { return string.Join("-", Enumerable.Range(1, 3).Select(i => "four" + i)); }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static int DetachMarker1() { return 1; }
    [MethodImpl(MethodImplOptions.NoInlining)]
    static int DetachMarker2() { return 2; }
    [MethodImpl(MethodImplOptions.NoInlining)]
    static int DetachMarker3() { return 3; }
    [MethodImpl(MethodImplOptions.NoInlining)]
    static int DetachMarker4() { return 4; }

    static string RunPhase(int n)
    {
        switch (n)
        {
            case 1: return Phase1Work();
            case 2: return Phase2Work();
            case 3: return Phase3Work();
            case 4: return Phase4Work();
        }
        return "no such phase";
    }

    static int RunDetach(int n)
    {
        switch (n)
        {
            case 1: return DetachMarker1();
            case 2: return DetachMarker2();
            case 3: return DetachMarker3();
            case 4: return DetachMarker4();
        }
        return 0;
    }

    static int Main()
    {
        var worker = new Thread(Worker);
        worker.Start();
        // Let the worker get going (and its methods compiled) first.
        while (Interlocked.Read(ref iterations) < 100) Thread.Sleep(1);
        Console.WriteLine("ready");
        string line;
        while ((line = Console.ReadLine()) != null)
        {
            line = line.Trim();
            if (line == "quit") break;
            if (line == "ping")
            {
                Console.WriteLine("pong " + Interlocked.Read(ref iterations));
            }
            else if (line.StartsWith("phase "))
            {
                int n = int.Parse(line.Substring(6));
                Console.WriteLine("phase " + n + " done: " + RunPhase(n));
            }
            else if (line.StartsWith("detach "))
            {
                int n = int.Parse(line.Substring(7));
                Console.WriteLine("detach " + n + " called: " + RunDetach(n));
            }
            else
            {
                Console.WriteLine("unknown command: " + line);
            }
        }
        stop = true;
        worker.Join();
        GC.Collect();
        Console.WriteLine("iterations: " + Interlocked.Read(ref iterations));
        Console.WriteLine("app done");
        return 0;
    }
}
