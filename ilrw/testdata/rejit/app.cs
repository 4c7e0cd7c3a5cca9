// The app of ilrw's ReJIT test: Greeting runs, then the profiler rewrites
// it through ReJIT (when RequestRejit is first compiled) and later reverts
// it (when RequestRevert is); the app waits for each change to show.
using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Threading;

static class Program
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    static string Greeting() { return "hello"; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void RequestRejit() { }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void RequestRevert() { }

    static string WaitFor(string want)
    {
        var sw = Stopwatch.StartNew();
        string s;
        while ((s = Greeting()) != want && sw.ElapsedMilliseconds < 20000) Thread.Sleep(5);
        return s;
    }

    static int Main()
    {
        Console.WriteLine("before: " + Greeting());
        RequestRejit();
        Console.WriteLine("after rejit: " + WaitFor("rewritten by ReJIT"));
        RequestRevert();
        Console.WriteLine("after revert: " + WaitFor("hello"));
        Console.WriteLine("app done");
        return 0;
    }
}
