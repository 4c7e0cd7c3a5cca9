// Exception-heavy: THREADS threads (default 4) each throw and catch N
// exceptions (default 20,000) through a few frames with finally blocks, a
// third of them hardware faults (NullReferenceException).
// Usage: exceptions [N] [THREADS]
using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace Bench
{
    public sealed class BenchException : Exception { public BenchException(int i) : base("bench") { HResult = i; } }

    public sealed class Box { public int V; }

    public static class Exceptions
    {
        static long caught;
        static long finallies;
        static volatile Box none;

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int Thrower(int i, int depth)
        {
            if (depth > 0)
            {
                try { return Thrower(i, depth - 1) + 1; }
                finally { Interlocked.Increment(ref finallies); }
            }
            if (i % 3 == 0) return none.V; // NullReferenceException (SIGSEGV)
            throw new BenchException(i);
        }

        static void Run(int n)
        {
            for (int i = 0; i < n; i++)
            {
                try { Thrower(i, 3); }
                catch (BenchException) { Interlocked.Increment(ref caught); }
                catch (NullReferenceException) { Interlocked.Increment(ref caught); }
            }
        }

        public static int Main(string[] args)
        {
            int n = args.Length > 0 ? int.Parse(args[0]) : 20000;
            int threads = args.Length > 1 ? int.Parse(args[1]) : 4;
            var ts = new Thread[threads];
            for (int t = 0; t < threads; t++)
            {
                ts[t] = new Thread(() => Run(n));
                ts[t].Start();
            }
            foreach (var t in ts) t.Join();
            long want = (long)n * threads;
            if (Interlocked.Read(ref caught) != want || Interlocked.Read(ref finallies) != 3 * want)
            {
                Console.WriteLine("exceptions: WRONG caught=" + caught + " finallies=" + finallies);
                return 1;
            }
            Console.WriteLine("exceptions: caught=" + caught);
            return 0;
        }
    }
}
