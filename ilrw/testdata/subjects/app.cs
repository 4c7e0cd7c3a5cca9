// The app of ilrw's rewrite tests. Every method of namespace Subjects
// counts its own calls by hand (Manual.Count); the test profiler adds
// entry and exit hooks (class Hooks) to the same methods, and the test
// checks that both agree. Without a profiler the hooks never run and the
// output is the same apart from the "hook:" lines and the greeting.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Text;

public static class Manual
{
    static Dictionary<string, int> counts = new Dictionary<string, int>();
    public static void Count(string name)
    {
        lock (counts) { int n; counts.TryGetValue(name, out n); counts[name] = n + 1; }
    }
    public static void Report()
    {
        var keys = new List<string>(counts.Keys);
        keys.Sort(StringComparer.Ordinal);
        foreach (var k in keys) Console.WriteLine("manual " + k + "=" + counts[k]);
    }
}

public static class Hooks
{
    static Dictionary<string, int> enters = new Dictionary<string, int>();
    static Dictionary<string, int> exits = new Dictionary<string, int>();
    static Dictionary<string, string> last = new Dictionary<string, string>();
    static int ticks;
    public static void Enter(string name)
    {
        lock (enters) { int n; enters.TryGetValue(name, out n); enters[name] = n + 1; }
    }
    public static void Exit(string name, object ret)
    {
        lock (enters)
        {
            int n; exits.TryGetValue(name, out n); exits[name] = n + 1;
            last[name] = ret == null ? "null" : ret.ToString();
        }
    }
    public static void Tick() { ticks++; }
    public static string Replacement() { return "replaced"; }
    public static void Report()
    {
        var keys = new List<string>(enters.Keys);
        foreach (var k in exits.Keys) if (!enters.ContainsKey(k)) keys.Add(k);
        keys.Sort(StringComparer.Ordinal);
        foreach (var k in keys)
        {
            int e, x; string l;
            enters.TryGetValue(k, out e); exits.TryGetValue(k, out x); last.TryGetValue(k, out l);
            Console.WriteLine("hook: " + k + " enter=" + e + " exit=" + x + " last=" + l);
        }
        if (ticks > 0) Console.WriteLine("hook: ticks=" + ticks);
    }
}

namespace Subjects
{
    public struct Point
    {
        public int X, Y;
        public override string ToString() { return "(" + X + "," + Y + ")"; }
    }

    public class Work
    {
        int finallies;

        public Work(int f) { Manual.Count("Subjects.Work::.ctor"); finallies = f; }

        // Small enough for a tiny header.
        public static int Tiny(int a, int b) { Manual.Count("Subjects.Work::Tiny"); return a + b; }

        public static int Fib(int n)
        {
            Manual.Count("Subjects.Work::Fib");
            if (n < 2) return n;
            return Fib(n - 1) + Fib(n - 2);
        }

        public static string Classify(int x)
        {
            Manual.Count("Subjects.Work::Classify");
            switch (x)
            {
                case 0: return "zero";
                case 1: return "one";
                case 2: return "two";
                case 3: return "three";
                case 4: return "four";
                case 5: return "five";
                default: return "many";
            }
        }

        public int Guarded(int x)
        {
            Manual.Count("Subjects.Work::Guarded");
            int r = 0;
            try
            {
                if (x == 3) throw new InvalidOperationException("three");
                r = 100 / (10 - x);
            }
            catch (InvalidOperationException)
            {
                r = -1;
            }
            finally
            {
                finallies++;
            }
            return r;
        }

        public int Finallies { get { Manual.Count("Subjects.Work::get_Finallies"); return finallies; } }

        public static string Filtered(int x)
        {
            Manual.Count("Subjects.Work::Filtered");
            try
            {
                throw new ArgumentException(x.ToString());
            }
            catch (ArgumentException e) when (x % 2 == 0)
            {
                return "even " + e.Message;
            }
            catch (ArgumentException)
            {
                return "odd";
            }
        }

        public static string Nested(int x)
        {
            Manual.Count("Subjects.Work::Nested");
            var sb = new StringBuilder();
            try
            {
                try
                {
                    sb.Append("a");
                    if (x == 1) throw new ArgumentException("inner");
                    sb.Append("b");
                }
                catch (ArgumentException)
                {
                    sb.Append("c");
                    if (x == 1) throw new InvalidOperationException("outer");
                }
                finally
                {
                    sb.Append("d");
                }
                sb.Append("e");
            }
            catch (InvalidOperationException)
            {
                sb.Append("f");
            }
            finally
            {
                sb.Append("g");
            }
            return sb.ToString();
        }

        public static void Thrower(int x)
        {
            Manual.Count("Subjects.Work::Thrower");
            if (x > 0) throw new FormatException("thrown " + x);
        }

        public static void Early(int x, StringBuilder sb)
        {
            Manual.Count("Subjects.Work::Early");
            if (x > 5) { sb.Append("big;"); return; }
            if (x > 2) { sb.Append("mid;"); return; }
            sb.Append("small;");
        }

        // A loop whose body is within the reach of a short branch (mcs emits
        // long ones; the profiler shortens them); the profiler adds code to
        // it and the branches must become long again.
        public static string LoopLong(int n)
        {
            Manual.Count("Subjects.Work::LoopLong");
            var sb = new StringBuilder();
            for (int i = 0; i < n; i++)
            {
                sb.Append(i);
                sb.Append(',');
                sb.Append(i * 2);
                sb.Append(';');
                sb.Append(i % 3);
                sb.Append('|');
                sb.Append(i + 7);
                sb.Append(' ');
                sb.Append(i - 1);
                sb.Append('/');
            }
            return sb.ToString();
        }

        public static T Echo<T>(T v) { Manual.Count("Subjects.Work::Echo"); return v; }

        public static Point Make(int x, int y) { Manual.Count("Subjects.Work::Make"); Point p; p.X = x; p.Y = y; return p; }
    }

    public static class Greeter
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        public static string Original() { return "original"; }

        public static string Say() { Manual.Count("Subjects.Greeter::Say"); return "greet: " + Original(); }
    }
}

static class Program
{
    static int Main(string[] args)
    {
        if (args.Length > 0 && args[0] == "workload") Console.Write(Workload.Run());
        var w = new Subjects.Work(0);
        Console.WriteLine("tiny " + Subjects.Work.Tiny(2, 3));
        Console.WriteLine("fib " + Subjects.Work.Fib(10));
        for (int i = 0; i < 8; i++) Console.WriteLine("classify " + i + " " + Subjects.Work.Classify(i));
        for (int i = 0; i < 12; i++)
        {
            try { Console.WriteLine("guarded " + i + " " + w.Guarded(i)); }
            catch (DivideByZeroException) { Console.WriteLine("guarded " + i + " divide by zero"); }
        }
        Console.WriteLine("finallies " + w.Finallies);
        for (int i = 0; i < 4; i++) Console.WriteLine("filtered " + i + " " + Subjects.Work.Filtered(i));
        for (int i = 0; i < 3; i++) Console.WriteLine("nested " + i + " " + Subjects.Work.Nested(i));
        for (int i = 0; i < 3; i++)
        {
            try { Subjects.Work.Thrower(i); Console.WriteLine("thrower " + i + " ok"); }
            catch (FormatException e) { Console.WriteLine("thrower " + e.Message); }
        }
        var sb = new StringBuilder();
        for (int i = 0; i < 9; i++) Subjects.Work.Early(i, sb);
        Console.WriteLine("early " + sb);
        Console.WriteLine("loop " + Subjects.Work.LoopLong(20));
        Console.WriteLine("echo " + Subjects.Work.Echo(42) + " " + Subjects.Work.Echo("str") + " " + Subjects.Work.Echo(7L));
        Console.WriteLine("make " + Subjects.Work.Make(3, 4));
        Console.WriteLine(Subjects.Greeter.Say());
        Manual.Report();
        Hooks.Report();
        Console.WriteLine("app done");
        return 0;
    }
}
