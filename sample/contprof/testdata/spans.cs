// The app of TestContprofSpans and TestContprofExport: it marks a span
// by throwing SpanEnter and SpanExit (the test build of contprof turns
// them into a tracer's "this thread entered/left span S"), spins inside
// the span in Spans.InSpan and outside it in Spans.OutOfSpan, and throws
// a few exceptions and allocates between periods, so that every profile
// kind has samples. A third argument, flips, then enters and leaves the
// span that many times, about a millisecond inside and one outside each
// time: samples taken near the span's edges.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Threading;

class SpanEnter : Exception {}
class SpanExit : Exception {}

static class Spans {
    static long sink;
    static List<byte[]> keep = new List<byte[]>();

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Spin(int ms) {
        var sw = Stopwatch.StartNew();
        long x = 0;
        while (sw.ElapsedMilliseconds < ms) { for (int i = 0; i < 10000; i++) x += i ^ (x >> 3); }
        sink += x;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void InSpan(int ms) { Spin(ms); }
    [MethodImpl(MethodImplOptions.NoInlining)]
    static void OutOfSpan(int ms) { Spin(ms); }

    static void Mark(Exception e) {
        try { throw e; } catch (Exception) { }
    }

    static void Main(string[] args) {
        int ms = args.Length > 0 ? int.Parse(args[0]) : 1200;
        int rounds = args.Length > 1 ? int.Parse(args[1]) : 2;
        int flips = args.Length > 2 ? int.Parse(args[2]) : 0;
        for (int r = 0; r < rounds; r++) {
            Mark(new SpanEnter());
            InSpan(ms);
            Mark(new SpanExit());
            OutOfSpan(ms);
            for (int i = 0; i < 20; i++) {
                try { throw new InvalidOperationException("x"); } catch (InvalidOperationException) { }
                keep.Add(new byte[4000]);
            }
            GC.Collect();
        }
        for (int f = 0; f < flips; f++) {
            Mark(new SpanEnter());
            InSpan(1);
            Mark(new SpanExit());
            OutOfSpan(1);
        }
        Console.WriteLine("app done " + (sink & 1));
    }
}
