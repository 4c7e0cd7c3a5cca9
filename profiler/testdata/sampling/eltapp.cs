// The app of the ELT, stack and sampling tests (profiler/testdata/sampling).
//
//   calls N      calls each method of Elt.Known N times (ints, floats,
//                doubles, structs in and out of registers, a struct returned
//                through a hidden buffer, many arguments spilling to the
//                stack), checks every result, prints "regs: ok" or the
//                mismatches, and "calls: N";
//   throw N      N times: Elt.Thrower.Deep(3) recurses three frames and
//                throws from the innermost; Elt.Thrower.Catch catches;
//   tail N       N calls of a dynamic method pair emitted with the tail.
//                prefix (Elt.Tail.Entry tail-calls Elt.Tail.Target);
//   info         calls Elt.Info.Args(7, 2.5, 1.25f, -9L, true) and
//                Elt.Info.Ret(21) (for the WithInfo hooks);
//   spin S       spends S seconds in Elt.Hot.Spin (a CPU-bound loop),
//                with a little time in Elt.Hot.Cold;
// Every mode ends with "cpu_ms=N" (the process's CPU time) and "app done".
//
//   alloc S      for S seconds allocates in Elt.Alloc.Heavy (many byte[64]
//                and Elt.Alloc.Big objects) and a little in Elt.Alloc.Light;
//   collect S    for S seconds collects a heap of 300,000 live arrays, one
//                GC.Collect after another.
using System;
using System.Collections.Generic;
using System.Reflection;
using System.Reflection.Emit;
using System.Runtime.CompilerServices;
using System.Diagnostics;
using System.Threading;

namespace Elt
{
    public struct Vec2 { public double X, Y; }
    public struct Mixed { public long A; public double B; }
    public struct Big { public long A, B, C; }
    public struct Small { public float F; public int I; }

    public class Known
    {
        [MethodImpl(MethodImplOptions.NoInlining)] public static int IntAdd(int a, int b) { return a + b; }
        [MethodImpl(MethodImplOptions.NoInlining)] public static double Doubles(double a, double b, double c, double d, double e, double f, double g, double h, double i, double j)
        { return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + 9 * i + 10 * j; }
        [MethodImpl(MethodImplOptions.NoInlining)] public static float Floats(float a, double b, float c, int d) { return a * 2 + (float)b + c * 3 + d; }
        [MethodImpl(MethodImplOptions.NoInlining)] public static Vec2 AddVec(Vec2 a, Vec2 b) { Vec2 r; r.X = a.X + b.X; r.Y = a.Y * b.Y; return r; }
        [MethodImpl(MethodImplOptions.NoInlining)] public static Mixed Mix(Mixed m, double k, long l) { Mixed r; r.A = m.A * l + 1; r.B = m.B * k - 0.5; return r; }
        [MethodImpl(MethodImplOptions.NoInlining)] public static Big MakeBig(long a, Big b) { Big r; r.A = a + b.C; r.B = b.A * 3; r.C = b.B - a; return r; }
        [MethodImpl(MethodImplOptions.NoInlining)] public static Small Smalls(Small s, float g) { Small r; r.F = s.F * g; r.I = s.I + 1; return r; }
        [MethodImpl(MethodImplOptions.NoInlining)] public static long ManyInts(int a, long b, int c, long d, int e, long f, int g, long h, int i)
        { return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + 9 * i; }
        [MethodImpl(MethodImplOptions.NoInlining)] public string Inst(string s, double d) { return s + ":" + d.ToString("R"); }
    }

    public static class Thrower
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Deep(int n)
        {
            if (n == 0) throw new InvalidOperationException("deep");
            return Deep(n - 1) + 1;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static int Catch()
        {
            try { return Deep(3); }
            catch (InvalidOperationException) { return -1; }
        }
    }

    public static class Info
    {
        [MethodImpl(MethodImplOptions.NoInlining)] public static long Args(int a, double b, float c, long d, bool e) { return a + (long)(b * 10) + (long)(c * 100) + d + (e ? 1 : 0); }
        [MethodImpl(MethodImplOptions.NoInlining)] public static double Ret(int x) { return x * 0.5; }
    }

    public static class Hot
    {
        static volatile int sink;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long Spin(long iterations)
        {
            long h = 1469598103934665603;
            for (long i = 0; i < iterations; i++) { h ^= i; h *= 1099511628211; }
            return h;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long Cold(long iterations) { return Spin(iterations / 50); }

        public static void Run(double seconds)
        {
            var sw = Stopwatch.StartNew();
            long acc = 0;
            int rounds = 0;
            while (sw.Elapsed.TotalSeconds < seconds)
            {
                acc += Spin(2000000);
                acc += Cold(2000000);
                rounds++;
            }
            sink = (int)acc;
            Console.WriteLine("spin: rounds=" + rounds);
        }
    }

    public class BigObj { public long A, B, C, D, E, F, G, H; }

    // Collect keeps a few hundred thousand objects alive and collects
    // them all, over and over: the runtime is suspended for a garbage
    // collection most of the time (the snapshot timing test).
    public static class Collect
    {
        public static void Run(double seconds)
        {
            var live = new List<object>();
            for (int i = 0; i < 300000; i++) live.Add(new int[2]);
            var sw = Stopwatch.StartNew();
            int n = 0;
            while (sw.Elapsed.TotalSeconds < seconds) { GC.Collect(); n++; }
            GC.KeepAlive(live);
            Console.WriteLine("collect: collections=" + (n > 0 ? "some" : "none"));
        }
    }

    public static class Alloc
    {
        static object keep;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long Heavy(int n)
        {
            long total = 0;
            for (int i = 0; i < n; i++)
            {
                var b = new byte[64];
                var o = new BigObj();
                o.A = i;
                keep = b;
                total += b.Length + o.A;
            }
            return total;
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public static long Light(int n)
        {
            long total = 0;
            for (int i = 0; i < n; i++) { var s = new int[4]; keep = s; total += s.Length; }
            return total;
        }

        public static void Run(double seconds)
        {
            var sw = Stopwatch.StartNew();
            long acc = 0, rounds = 0;
            while (sw.Elapsed.TotalSeconds < seconds)
            {
                acc += Heavy(10000);
                acc += Light(500);
                rounds++;
            }
            Console.WriteLine("alloc: rounds=" + rounds + " heavy=" + rounds * 10000 + " light=" + rounds * 500);
        }
    }

    public static class Program
    {
        static int bad;

        static void Check(bool ok, string what)
        {
            if (!ok) { bad++; if (bad < 20) Console.WriteLine("regs: BAD " + what); }
        }

        static void Calls(int n)
        {
            var inst = new Known();
            for (int k = 0; k < n; k++)
            {
                int i = k + 1;
                double d = i * 0.25;
                Check(Known.IntAdd(i, 3) == i + 3, "IntAdd");
                Check(Known.Doubles(d, 1, 2, 3, 4, 5, 6, 7, 8, d) == d + 2 + 6 + 12 + 20 + 30 + 42 + 56 + 72 + 10 * d, "Doubles");
                Check(Known.Floats(1.5f, d, 2.0f, i) == 1.5f * 2 + (float)d + 2.0f * 3 + i, "Floats");
                Vec2 a; a.X = d; a.Y = 2; Vec2 b; b.X = 1; b.Y = d;
                Vec2 v = Known.AddVec(a, b);
                Check(v.X == d + 1 && v.Y == 2 * d, "AddVec");
                Mixed m; m.A = i; m.B = d;
                Mixed mr = Known.Mix(m, 4.0, 3);
                Check(mr.A == i * 3 + 1 && mr.B == d * 4.0 - 0.5, "Mix");
                Big bg; bg.A = i; bg.B = 7; bg.C = 11;
                Big br = Known.MakeBig(5, bg);
                Check(br.A == 16 && br.B == i * 3 && br.C == 2, "MakeBig");
                Small s; s.F = 1.5f; s.I = i;
                Small sr = Known.Smalls(s, 2.0f);
                Check(sr.F == 3.0f && sr.I == i + 1, "Smalls");
                Check(Known.ManyInts(1, 2, 3, 4, 5, 6, 7, i, 9) == 1 + 4 + 9 + 16 + 25 + 36 + 49 + 8L * i + 81, "ManyInts");
                Check(inst.Inst("x", d) == "x:" + d.ToString("R"), "Inst");
            }
            Console.WriteLine(bad == 0 ? "regs: ok" : "regs: " + bad + " bad");
            Console.WriteLine("calls: " + n);
        }

        static void Throws(int n)
        {
            int caught = 0;
            for (int i = 0; i < n; i++) if (Thrower.Catch() == -1) caught++;
            Console.WriteLine("throw: caught=" + caught);
        }

        static void Tails(int n)
        {
            var ab = AssemblyBuilder.DefineDynamicAssembly(new AssemblyName("EltTail"), AssemblyBuilderAccess.Run);
            var mb = ab.DefineDynamicModule("EltTail");
            var tb = mb.DefineType("Elt.Tail", TypeAttributes.Public | TypeAttributes.Abstract | TypeAttributes.Sealed);
            var target = tb.DefineMethod("Target", MethodAttributes.Public | MethodAttributes.Static, typeof(long), new[] { typeof(long) });
            var il = target.GetILGenerator();
            il.Emit(OpCodes.Ldarg_0);
            il.Emit(OpCodes.Ldc_I8, 3L);
            il.Emit(OpCodes.Mul);
            il.Emit(OpCodes.Ret);
            target.SetImplementationFlags(MethodImplAttributes.NoInlining);
            var entry = tb.DefineMethod("Entry", MethodAttributes.Public | MethodAttributes.Static, typeof(long), new[] { typeof(long) });
            il = entry.GetILGenerator();
            il.Emit(OpCodes.Ldarg_0);
            il.Emit(OpCodes.Ldc_I8, 1L);
            il.Emit(OpCodes.Add);
            il.Emit(OpCodes.Tailcall);
            il.Emit(OpCodes.Call, target);
            il.Emit(OpCodes.Ret);
            entry.SetImplementationFlags(MethodImplAttributes.NoInlining);
            var t = tb.CreateTypeInfo().AsType();
            var f = (Func<long, long>)t.GetMethod("Entry").CreateDelegate(typeof(Func<long, long>));
            long sum = 0;
            for (int i = 0; i < n; i++) sum += f(i);
            long want = 0;
            for (int i = 0; i < n; i++) want += (i + 1) * 3L;
            Console.WriteLine("tail: " + (sum == want ? "ok" : "BAD " + sum + " != " + want));
        }

        public static int Main(string[] args)
        {
            string mode = args.Length > 0 ? args[0] : "calls";
            string arg = args.Length > 1 ? args[1] : "";
            switch (mode)
            {
                case "calls": Calls(arg == "" ? 1000 : int.Parse(arg)); break;
                case "throw": Throws(arg == "" ? 100 : int.Parse(arg)); break;
                case "tail": Tails(arg == "" ? 100 : int.Parse(arg)); break;
                case "info":
                    Console.WriteLine("info: " + Info.Args(7, 2.5, 1.25f, -9L, true) + " " + Info.Ret(21).ToString("R"));
                    break;
                case "spin": Hot.Run(arg == "" ? 2.0 : double.Parse(arg, System.Globalization.CultureInfo.InvariantCulture)); break;
                case "collect": Collect.Run(arg == "" ? 1.0 : double.Parse(arg, System.Globalization.CultureInfo.InvariantCulture)); break;
                case "alloc": Alloc.Run(arg == "" ? 2.0 : double.Parse(arg, System.Globalization.CultureInfo.InvariantCulture)); break;
                default: Console.WriteLine("unknown mode " + mode); return 2;
            }
            Console.WriteLine("cpu_ms=" + (long)Process.GetCurrentProcess().TotalProcessorTime.TotalMilliseconds);
            Console.WriteLine("app done");
            return 0;
        }
    }
}
