// The app of ilrw's ReJIT-with-inliners test: Greeting is inlined into
// Caller; the profiler rewrites Greeting through ReJIT with its inliners
// (when RequestRejit is first compiled) and later reverts it (when
// RequestRevert is). Only Caller calls Greeting, so the new string shows
// only if the runtime recompiled Caller too.
using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Threading;

static class Program
{
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    static string Greeting() { return "hello"; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static string Caller() { return Greeting(); }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void RequestRejit() { }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void RequestRevert() { }

    static string WaitFor(string want)
    {
        var sw = Stopwatch.StartNew();
        string s;
        while ((s = Caller()) != want && sw.ElapsedMilliseconds < 20000) Thread.Sleep(5);
        return s;
    }

    static int Main()
    {
        Console.WriteLine("before: " + Caller());
        RequestRejit();
        Console.WriteLine("after rejit: " + WaitFor("rewritten by ReJIT"));
        RequestRevert();
        Console.WriteLine("after revert: " + WaitFor("hello"));
        Console.WriteLine("app done");
        return 0;
    }
}
