// hello: the harness's hello world. It prints a fixed greeting, its
// arguments, where the core library was loaded from (so a test can check the
// runtime it ran on), and the results of a few framework features that the
// integration tests lean on: generics, LINQ, threads, exceptions, the GC.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;

static class Hello
{
    static int Main(string[] args)
    {
        Console.WriteLine("hello from the clrprof harness");
        Console.WriteLine("args: " + string.Join(",", args));
        Console.WriteLine("corelib: " + typeof(object).Assembly.Location);

        var squares = Enumerable.Range(1, 10).Select(i => i * i).Where(i => i % 2 == 0).ToList();
        Console.WriteLine("linq: " + string.Join(" ", squares));

        var d = new Dictionary<string, int>();
        foreach (var w in "b a c a b a".Split(' '))
        {
            int n;
            d.TryGetValue(w, out n);
            d[w] = n + 1;
        }
        Console.WriteLine("dict: " + string.Join(" ", d.OrderBy(kv => kv.Key).Select(kv => kv.Key + "=" + kv.Value)));

        long total = 0;
        var threads = new List<Thread>();
        for (int i = 1; i <= 4; i++)
        {
            int k = i;
            var th = new Thread(() => Interlocked.Add(ref total, k * 100));
            threads.Add(th);
            th.Start();
        }
        foreach (var th in threads) th.Join();
        Console.WriteLine("threads: " + total);

        try
        {
            object o = null;
            Console.WriteLine(o.ToString());
        }
        catch (NullReferenceException)
        {
            Console.WriteLine("caught: NullReferenceException");
        }
        try
        {
            int zero = args.Length - args.Length;
            Console.WriteLine(1 / zero);
        }
        catch (DivideByZeroException)
        {
            Console.WriteLine("caught: DivideByZeroException");
        }

        var junk = new List<byte[]>();
        for (int i = 0; i < 1000; i++) junk.Add(new byte[1024]);
        GC.Collect();
        GC.WaitForPendingFinalizers();
        Console.WriteLine("gc: " + (GC.CollectionCount(0) > 0 ? "collected" : "not collected"));

        Console.WriteLine("bye");
        return 0;
    }
}
