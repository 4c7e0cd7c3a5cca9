// CPU-bound loop for sampling: ITERS rounds (default 40) of a sieve of
// Eratosthenes over 2,000,000 numbers plus a floating-point loop, on the
// main thread, allocating nothing in the loop. Usage: cpu [ITERS]
using System;
using System.Runtime.CompilerServices;

namespace Bench
{
    public static class Cpu
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        static int Sieve(bool[] composite)
        {
            Array.Clear(composite, 0, composite.Length);
            int count = 0;
            for (int i = 2; i < composite.Length; i++)
            {
                if (composite[i]) continue;
                count++;
                for (long j = (long)i * i; j < composite.Length; j += i) composite[j] = true;
            }
            return count;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static double Series(int n)
        {
            double s = 0;
            for (int k = 0; k < n; k++) s += (k % 2 == 0 ? 1.0 : -1.0) / (2 * k + 1);
            return 4 * s;
        }

        public static int Main(string[] args)
        {
            int iters = args.Length > 0 ? int.Parse(args[0]) : 40;
            var composite = new bool[2000000];
            long primes = 0;
            double pi = 0;
            for (int i = 0; i < iters; i++)
            {
                primes += Sieve(composite);
                pi = Series(2000000);
            }
            if (primes != 148933L * iters || Math.Abs(pi - Math.PI) > 1e-5)
            {
                Console.WriteLine("cpu: WRONG primes=" + primes + " pi=" + pi);
                return 1;
            }
            Console.WriteLine("cpu: primes=" + primes + " pi=" + pi.ToString("F5"));
            return 0;
        }
    }
}
