// Allocation storm: THREADS threads (default 4) each allocate N small
// objects (default 1,000,000): a mix of plain objects, small classes and
// small arrays, with a few kept alive in a ring so that some survive a
// collection. Usage: alloc [N] [THREADS]
using System;
using System.Threading;

namespace Bench
{
    public sealed class Small { public int A; public long B; }
    public sealed class Pair { public object Left, Right; }

    public static class Alloc
    {
        static long total;

        static void Storm(int n, int seed)
        {
            object[] ring = new object[1024];
            long sum = 0;
            for (int i = 0; i < n; i++)
            {
                object o;
                switch ((i + seed) & 3)
                {
                    case 0: o = new object(); break;
                    case 1: o = new Small { A = i, B = seed }; break;
                    case 2: o = new int[(i & 7) + 1]; break;
                    default: o = new Pair { Left = ring[(i * 7) & 1023] }; break;
                }
                ring[i & 1023] = o;
                sum += o.GetHashCode() & 1;
            }
            Interlocked.Add(ref total, n + (sum & 0));
        }

        public static int Main(string[] args)
        {
            int n = args.Length > 0 ? int.Parse(args[0]) : 1000000;
            int threads = args.Length > 1 ? int.Parse(args[1]) : 4;
            var ts = new Thread[threads];
            for (int t = 0; t < threads; t++)
            {
                int seed = t;
                ts[t] = new Thread(() => Storm(n, seed));
                ts[t].Start();
            }
            foreach (var t in ts) t.Join();
            Console.WriteLine("alloc: objects=" + Interlocked.Read(ref total) + " gen0=" + GC.CollectionCount(0));
            return 0;
        }
    }
}
