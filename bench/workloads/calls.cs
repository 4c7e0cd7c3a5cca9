// Call-heavy: deep recursion and tight calls to small methods that are
// never inlined, for enter/leave hooks. Fib(DEPTH) (default 30) is computed
// ROUNDS times (default 6), and a loop calls a few leaf methods with int,
// double and struct arguments ROUNDS*100,000 times. Usage: calls [ROUNDS] [DEPTH]
using System;
using System.Runtime.CompilerServices;

namespace Bench
{
    public struct Vec { public double X, Y; }

    public static class Calls
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        static int Fib(int n) { return n < 2 ? n : Fib(n - 1) + Fib(n - 2); }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static int Add(int a, int b) { return a + b; }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static double Scale(double x, double f) { return x * f; }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static Vec Mid(Vec a, Vec b) { Vec r; r.X = (a.X + b.X) / 2; r.Y = (a.Y + b.Y) / 2; return r; }

        public static int Main(string[] args)
        {
            int rounds = args.Length > 0 ? int.Parse(args[0]) : 6;
            int depth = args.Length > 1 ? int.Parse(args[1]) : 30;
            long fib = 0;
            for (int r = 0; r < rounds; r++) fib += Fib(depth);
            int acc = 0;
            double d = 1;
            Vec v = new Vec { X = 1, Y = 2 }, w = new Vec { X = 3, Y = 4 };
            for (int i = 0; i < rounds * 100000; i++)
            {
                acc = Add(acc, i);
                d = Scale(d, 1.0000001);
                v = Mid(v, w);
            }
            if (fib != (long)rounds * Fib(depth) || Math.Abs(v.X - 3) > 1e-6 || d < 1) {
                Console.WriteLine("calls: WRONG fib=" + fib + " v=" + v.X + " d=" + d);
                return 1;
            }
            Console.WriteLine("calls: fib=" + fib + " acc=" + acc);
            return 0;
        }
    }
}
