using System;
using System.Threading;

namespace Hooked {
	public enum Color : byte { Red = 1, Green = 2, Blue = 200 }
	public enum Big : long { Min = long.MinValue, One = 1 }

	public class Oops : Exception { public Oops(string m) : base(m) {} }

	public class Kinds {
		int seed;
		public Kinds(int seed) { this.seed = seed; }

		public static long Ints(sbyte a, short b, int c, long d, byte e, ushort f, uint g, ulong h) {
			return a + b + c + d + e + f + g + (long)h;
		}
		public static double Floats(float a, double b, bool c, char d) { return c ? a + b + d : -1; }
		public static string Strings(string a, string b, string c) { return a + "|" + (b == null ? "null" : b) + "|" + c; }
		public static Color Enums(Color c, Big b) { return c == Color.Blue ? Color.Green : Color.Blue; }
		public static int ByRef(ref int a, out int b) { b = a + 1; a = a * 2; return a; }
		public int Instance(object o, int[] arr, int x) { return seed + x + arr.Length; }
		public static ulong Nine(int a1, int a2, int a3, int a4, int a5, int a6, int a7, int a8, int a9) {
			return (ulong)(a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9);
		}
		public static bool Flag(bool b) { return !b; }
		public static char Letter(char c) { return (char)(c + 1); }
		public static float Single(float f) { return f * 2; }
		public static void Nothing() { }
		public static string NullString() { return null; }
		public static int Throws(int how) {
			if (how == 1) throw new InvalidOperationException("bad");
			if (how == 2) throw new Oops("oops");
			return how;
		}
		public static int Panicky(int x) { return x + 1; }
		public static int Outer(int x) { return Inner(x) + 1; }
		public static int Inner(int x) { return x * 10; }
		public static long Hot(int i) { return i * 3L; }
		public static string Long(string s) { return s + "!"; }
		public static int Rec(int d, int i) { return d > 0 ? Rec(d - 1, i) + 1 : i; }
	}

	public static class Program {
		// storm SECONDS [MINCOLLECTIONS]: 8 threads call Hot and allocate
		// while a ninth collects every millisecond, for SECONDS, and on
		// until MINCOLLECTIONS collections were made (for at most 8 times
		// SECONDS): on a loaded machine the collecting thread can get so
		// little of the CPUs that SECONDS alone gave 2 collections.
		static int Storm(double seconds, int minCollections) {
			var sw = System.Diagnostics.Stopwatch.StartNew();
			bool stop = false;
			long calls = 0, rounds = 0;
			var ts = new Thread[8];
			for (int t = 0; t < ts.Length; t++) {
				ts[t] = new Thread(() => {
					long n = 0;
					object[] keep = new object[64];
					while (!Volatile.Read(ref stop)) {
						for (int i = 0; i < 1000; i++) {
							Kinds.Hot(i);
							keep[i & 63] = new int[i & 31];
						}
						n += 1000;
					}
					Interlocked.Add(ref calls, n);
				});
				ts[t].Start();
			}
			while (sw.Elapsed.TotalSeconds < seconds ||
				(GC.CollectionCount(0) < minCollections && sw.Elapsed.TotalSeconds < 8 * seconds)) {
				GC.Collect();
				rounds++;
				Thread.Sleep(1);
			}
			Volatile.Write(ref stop, true);
			foreach (var t in ts) t.Join();
			Console.WriteLine("storm: calls=" + calls + " collections=" + GC.CollectionCount(0) + " rounds=" + rounds + " seconds=" + sw.Elapsed.TotalSeconds.ToString("F1", System.Globalization.CultureInfo.InvariantCulture));
			return 0;
		}

		// rec N: 8 threads call Rec(3, i) (4 nested calls) N times each.
		static int RecThreads(int n) {
			int threads = 8;
			long bad = 0;
			var ts = new Thread[threads];
			for (int t = 0; t < threads; t++) {
				ts[t] = new Thread(() => {
					for (int i = 0; i < n; i++) if (Kinds.Rec(3, i) != i + 3) Interlocked.Increment(ref bad);
				});
				ts[t].Start();
			}
			foreach (var t in ts) t.Join();
			Console.WriteLine("rec: calls=" + (long)threads * n * 4 + " bad=" + bad);
			return 0;
		}

		public static int Main(string[] args) {
			if (args.Length > 1 && args[0] == "storm") return Storm(double.Parse(args[1], System.Globalization.CultureInfo.InvariantCulture), args.Length > 2 ? int.Parse(args[2]) : 0);
			if (args.Length > 1 && args[0] == "rec") return RecThreads(int.Parse(args[1]));
			Console.WriteLine(Kinds.Ints(-8, -1600, -320000, -64000000000L, 200, 65000, 4000000000u, 18000000000000000000UL));
			Console.WriteLine(Kinds.Floats(1.5f, -2.25, true, 'A'));
			Console.WriteLine(Kinds.Strings("héllo wörld ☃", null, ""));
			Console.WriteLine(Kinds.Enums(Color.Blue, Big.Min));
			int r = 21, o;
			Console.WriteLine(Kinds.ByRef(ref r, out o) + " " + r + " " + o);
			Console.WriteLine(new Kinds(5).Instance("x", new int[3], 7));
			Console.WriteLine(Kinds.Nine(1, 2, 3, 4, 5, 6, 7, 8, 9));
			Console.WriteLine(Kinds.Flag(false));
			Console.WriteLine(Kinds.Letter('y'));
			Console.WriteLine(Kinds.Single(0.75f));
			Kinds.Nothing();
			Console.WriteLine(Kinds.NullString() == null);
			for (int how = 0; how < 3; how++) {
				try { Console.WriteLine(Kinds.Throws(how)); }
				catch (Exception e) { Console.WriteLine("caught " + e.GetType().Name + " " + e.Message); }
			}
			Console.WriteLine(Kinds.Panicky(41));
			Console.WriteLine(Kinds.Outer(4));
			Console.WriteLine(Kinds.Long(new string('x', 3000)).Length);
			int threads = 8, calls = args.Length > 0 ? int.Parse(args[0]) : 20000;
			long total = 0;
			var ts = new Thread[threads];
			for (int t = 0; t < threads; t++) {
				ts[t] = new Thread(() => {
					long s = 0;
					for (int i = 0; i < calls; i++) s += Kinds.Hot(i);
					Interlocked.Add(ref total, s);
				});
				ts[t].Start();
			}
			foreach (var t in ts) t.Join();
			Console.WriteLine("hot " + total);
			return 0;
		}
	}
}
