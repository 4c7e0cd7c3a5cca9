// A small app for the profiler's integration tests: enough work to load
// several modules and JIT some methods, no exceptions (NullReference and
// DivideByZero are signals, a separate concern), a last line to check.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Text;
using System.Threading;

static class App
{
    static int Work(int n)
    {
        var squares = Enumerable.Range(1, n).Select(i => i * i).Where(i => i % 2 == 0).ToList();
        var sb = new StringBuilder();
        foreach (var s in squares) sb.Append(s).Append(' ');
        var dict = new Dictionary<string, int>();
        foreach (var w in "a b c a b a".Split(' ')) dict[w] = dict.TryGetValue(w, out var c) ? c + 1 : 1;
        return sb.Length + dict.Count;
    }

    static int Main(string[] args)
    {
        int total = 0;
        var threads = new List<Thread>();
        for (int t = 0; t < 4; t++)
        {
            var th = new Thread(() => { Interlocked.Add(ref total, Work(100)); });
            th.Start();
            threads.Add(th);
        }
        foreach (var th in threads) th.Join();
        GC.Collect();
        Console.WriteLine("work: " + total);
        Console.WriteLine("app done");
        return 0;
    }
}
