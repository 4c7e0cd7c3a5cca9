// The app of package instr's integration tests: one method of each kind
// the wrap must handle, called from Main, which prints their results.
using System;
using System.Collections.Generic;

namespace Shop {
	public class Order {
		public int Id;
		public Order(int id) { Id = id; }
		public string Describe(string prefix) { return prefix + "#" + Id; }
		public void Nothing() { }
	}

	public struct Point {
		public int X, Y;
		public Point(int x, int y) { X = x; Y = y; }
		public int Sum() { return X + Y; }
		public override string ToString() { return "(" + X + "," + Y + ")"; }
	}

	public abstract class Shape {
		public abstract double Area();
	}

	public class Square : Shape {
		public double Side;
		public override double Area() { return Side * Side; }
	}

	public struct Pair<T> {
		public T A, B;
		public Pair(T a, T b) { A = a; B = b; }
		public T First() { return A; }
		public static Pair<T> Swap(Pair<T> p) { return new Pair<T>(p.B, p.A); }
		public override string ToString() { return "<" + A + "," + B + ">"; }
	}

	public static class Settings {
		public static readonly int Value = Compute();
		static int Compute() { return 40 + 2; }
	}

	public class Box<T> {
		T value;
		public Box(T v) { value = v; }
		public T Get() { return value; }
		public class Inner {
			public static string F(T t) { return "inner:" + t; }
		}
	}

	public class Cache {
		public string Get(int i) { return "int:" + i; }
		public string Get(string s) { return "string:" + s; }
	}

	public class Calc {
		public static int Add(int a, int b) { return a + b; }
		public static void Twice(ref int x, out string note) { x = x * 2; note = "doubled"; }
		public static T Echo<T>(T t) { return t; }
		public static int Fail(int code) {
			if (code > 0) throw new InvalidOperationException("fail " + code);
			return code;
		}
		public static int Guarded(int n) {
			int r = 0;
			try {
				try {
					if (n == 1) throw new ArgumentException("one");
					if (n == 2) throw new FormatException("two");
					r = n * 10;
				} catch (ArgumentException) {
					r = -1;
				} catch (Exception e) when (e.Message == "two") {
					r = -2;
				}
			} finally {
				r += 1000;
			}
			return r;
		}
		public static int Inner(int n) { return n + 1; }
		// Expression-bodied: call then ret with both compilers (Roslyn's
		// debug build of a block body stores the result in a local and
		// branches to a shared ret, where the test profiler finds no call
		// followed by ret to give the tail. prefix).
		public static int TailCaller(int n) => Inner(n);
		// Big: a body long enough that the wrap's longer exits push short
		// branches out of reach (the profiler shortens them first).
		public static int Big(int n) {
			if (n == 0) return 100;
			if (n == 1) return 101;
			if (n == 2) return 102;
			if (n == 3) return 103;
			if (n == 4) return 104;
			if (n == 5) return 105;
			if (n == 6) return 106;
			if (n == 7) return 107;
			if (n == 8) return 108;
			if (n == 9) return 109;
			if (n == 10) return 110;
			if (n == 11) return 111;
			if (n == 12) return 112;
			if (n == 13) return 113;
			if (n == 14) return 114;
			if (n == 15) return 115;
			if (n == 16) return 116;
			if (n == 17) return 117;
			if (n == 18) return 118;
			if (n == 19) return 119;
			if (n == 20) return 120;
			if (n == 21) return 121;
			if (n == 22) return 122;
			if (n == 23) return 123;
			if (n == 24) return 124;
			if (n == 25) return 125;
			if (n == 26) return 126;
			if (n == 27) return 127;
			if (n == 28) return 128;
			if (n == 29) return 129;
			if (n == 30) return 130;
			if (n == 31) return 131;
			if (n == 32) return 132;
			return -1;
		}
		public static int Late(int n) { return n * 3; }
		public static int Rethrows(int n) {
			int r = 0;
			try {
				r = 10 / n;
			} catch (DivideByZeroException) {
				r = -1;
				throw;
			} finally {
				r++;
			}
			return r;
		}
		public static unsafe int Stack(int n) {
			int* p = stackalloc int[n];
			for (int i = 0; i < n; i++) p[i] = i;
			int s = 0;
			for (int i = 0; i < n; i++) s += p[i];
			return s;
		}
	}

	public class Program {
		// Not inlined into Main (which is compiled optimized where it has
		// loops): the profiler must see them compiled, and Main's frame,
		// active all along, keeps its first code.
		[System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
		static void AddTargetsNow() { }
		[System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
		static int CallLate(int i) { return Calc.Late(i); }

		// WaitForFile waits (10 s at most) for the file the environment
		// variable names: INSTR_START_FILE, which the test profiler creates
		// once its ReJIT requests of start-up were accepted, and
		// INSTR_WAIT_FILE, once it has added targets.
		static void WaitForFile(string variable) {
			string f = Environment.GetEnvironmentVariable(variable);
			if (string.IsNullOrEmpty(f)) return;
			for (int i = 0; i < 1000 && !System.IO.File.Exists(f); i++) System.Threading.Thread.Sleep(10);
		}

		static int Main(string[] args) {
			WaitForFile("INSTR_START_FILE");
			Console.WriteLine("add " + Calc.Add(2, 3));
			var o = new Order(7);
			Console.WriteLine("describe " + o.Describe("order"));
			o.Nothing();
			var p = new Point(3, 4);
			Console.WriteLine("point " + p.Sum() + " " + p);
			int x = 21; string note;
			Calc.Twice(ref x, out note);
			Console.WriteLine("twice " + x + " " + note);
			Console.WriteLine("echo " + Calc.Echo<int>(5) + " " + Calc.Echo<string>("hi") + " " + Calc.Echo<Point>(p));
			Console.WriteLine("box " + new Box<int>(9).Get() + " " + new Box<string>("s").Get() + " " + new Box<List<int>>(new List<int>()).Get().Count);
			Console.WriteLine("inner " + Box<long>.Inner.F(12L) + " " + Box<string>.Inner.F("t"));
			var c = new Cache();
			Console.WriteLine("cache " + c.Get(1) + " " + c.Get("a"));
			Console.WriteLine("fail " + Calc.Fail(0));
			try {
				Calc.Fail(3);
				Console.WriteLine("no exception");
			} catch (InvalidOperationException e) {
				string trace = e.StackTrace ?? "";
				Console.WriteLine("caught " + e.Message + " thrown in Fail: " + (trace.IndexOf("Calc.Fail") >= 0));
			}
			Console.WriteLine("guarded " + Calc.Guarded(0) + " " + Calc.Guarded(1) + " " + Calc.Guarded(2) + " " + Calc.Guarded(3));
			Console.WriteLine("tail " + Calc.TailCaller(41));
			int big = 0;
			for (int i = 0; i < 34; i++) big += Calc.Big(i);
			Console.WriteLine("big " + big);
			int[] arr = { 1, 2, 3 };
			Array.Reverse((Array)arr);
			Console.WriteLine("reverse " + arr[0] + arr[1] + arr[2]);
			var pi = new Pair<int>(1, 2);
			var ps = new Pair<string>("x", "y");
			Console.WriteLine("pair " + pi.First() + " " + ps.First() + " " + Pair<int>.Swap(pi) + " " + Pair<string>.Swap(ps));
			Console.WriteLine("settings " + Settings.Value);
			Console.WriteLine("rethrows " + Calc.Rethrows(5));
			try {
				Calc.Rethrows(0);
			} catch (DivideByZeroException e) {
				Console.WriteLine("caught " + e.GetType().Name + " from Rethrows: " + ((e.StackTrace ?? "").IndexOf("Calc.Rethrows") >= 0));
			}
			Console.WriteLine("stack " + Calc.Stack(10));
			Console.WriteLine("linq " + System.Linq.Enumerable.Sum(System.Linq.Enumerable.Range(1, 4)));
			Shape sq = new Square { Side = 1.5 };
			Console.WriteLine("area " + sq.Area());
			// Hot enough for tiered compilation to recompile it (30 calls,
			// then the tiering delay passes during the Sleep below).
			for (int i = 0; i < 100; i++) Array.Reverse((Array)arr);
			Console.WriteLine("late " + CallLate(1));
			AddTargetsNow();
			WaitForFile("INSTR_WAIT_FILE");
			System.Threading.Thread.Sleep(300);
			for (int i = 0; i < 3; i++) Console.WriteLine("late " + CallLate(i));
			for (int i = 0; i < 100; i++) Array.Reverse((Array)arr);
			Console.WriteLine("reverse " + arr[0] + arr[1] + arr[2]);
			Console.WriteLine("app done");
			return 0;
		}
	}
}
