// metaapp: the test app of package metadata's integration tests. It uses
// generics (classes and methods, nested, over value and reference types),
// nested types, arrays, byrefs, pointers, volatile fields, out/ref
// parameters, a type forwarded from fwda.dll to fwdb.dll, and on runtimes
// that have them a collectible AssemblyLoadContext that it unloads.
using System;
using System.Collections.Generic;
using System.IO;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Threading;

namespace Meta.Test {
	public struct Point {
		public int X, Y;
		public Point(int x, int y) { X = x; Y = y; }
	}

	public class Outer<T> {
		public T Item;

		public class Nested<U> {
			[MethodImpl(MethodImplOptions.NoInlining)]
			public static int Pair<V>(T t, U u, V v, string[] names) { return names.Length; }
		}

		public class Plain {
			[MethodImpl(MethodImplOptions.NoInlining)]
			public int Count(T[] items, List<T> more) { return items.Length + more.Count; }
		}
	}

	[Obsolete("old shapes")]
	public class Legacy {
		public int Value { get; set; }
	}

	public unsafe class Shapes {
		public event EventHandler Changed;
		public volatile int Flag;
		public static volatile string Name;
		public int[,] Grid;
		public Point* Cursor;

		[MethodImpl(MethodImplOptions.NoInlining)]
		public static int Sum(int* p, int n) {
			int s = 0;
			for (int i = 0; i < n; i++) s += p[i];
			return s;
		}

		[MethodImpl(MethodImplOptions.NoInlining)]
		public static void Swap(ref int a, ref int b) { int t = a; a = b; b = t; }

		[MethodImpl(MethodImplOptions.NoInlining)]
		public static bool TryGet(int key, out string value) { value = key.ToString(); return key > 0; }

		[MethodImpl(MethodImplOptions.NoInlining)]
		public static int Cells(int[,] grid, int[][] jagged, byte** rows) { return grid.Length + jagged.Length + (rows == null ? 0 : 1); }

		[MethodImpl(MethodImplOptions.NoInlining)]
		public static int Fixed(int[] data) {
			fixed (int* p = data) {
				return Sum(p, data.Length);
			}
		}
	}

	public static class Gen {
		[MethodImpl(MethodImplOptions.NoInlining)]
		public static T Id<T>(T x) { return x; }

		// Shared<string> runs in code shared by reference types; it throws
		// and catches so that the profiler can walk its frame.
		[MethodImpl(MethodImplOptions.NoInlining)]
		public static int Shared<T>(T x) where T : class {
			try {
				throw new InvalidOperationException("frame-info probe");
			} catch (InvalidOperationException) {
				return x.GetHashCode() & 1;
			}
		}

		[MethodImpl(MethodImplOptions.NoInlining)]
		public static KeyValuePair<K, V>[] Pairs<K, V>(Dictionary<K, V> d) {
			var r = new KeyValuePair<K, V>[d.Count];
			int i = 0;
			foreach (var kv in d) r[i++] = kv;
			return r;
		}
	}

	public static class Program {
		[MethodImpl(MethodImplOptions.NoInlining)]
		static void Checkpoint() { Console.WriteLine("checkpoint"); }

		[MethodImpl(MethodImplOptions.NoInlining)]
		static void AfterUnload() { Console.WriteLine("after unload"); }

		[MethodImpl(MethodImplOptions.NoInlining)]
		static WeakReference LoadAndRun(string path) {
			Type alcType = typeof(object).Assembly.GetType("System.Runtime.Loader.AssemblyLoadContext");
			if (alcType == null) {
				alcType = Type.GetType("System.Runtime.Loader.AssemblyLoadContext, System.Runtime.Loader");
			}
			ConstructorInfo ctor = alcType == null ? null : alcType.GetConstructor(new Type[] { typeof(string), typeof(bool) });
			if (ctor == null) {
				return null;
			}
			object alc = ctor.Invoke(new object[] { "metaapp-collectible", true });
			var asm = (Assembly)alcType.GetMethod("LoadFromAssemblyPath").Invoke(alc, new object[] { path });
			object r = asm.GetType("AlcLib.Thing").GetMethod("Run").Invoke(null, null);
			Console.WriteLine("alc: ran " + r);
			alcType.GetMethod("Unload").Invoke(alc, null);
			return new WeakReference(alc);
		}

		static unsafe int Main(string[] args) {
			int sum = 0;
			sum += Outer<int>.Nested<string>.Pair<float>(1, "a", 2f, new string[] { "x", "y" });
			sum += Outer<string>.Nested<int>.Pair<Point>("s", 3, new Point(1, 2), new string[0]);
			sum += new Outer<long>.Plain().Count(new long[3], new List<long> { 4 });
			sum += new Outer<object>.Plain().Count(new object[1], new List<object>());
			sum += Gen.Id<int>(5) + Gen.Id<string>("six").Length + Gen.Id<Point>(new Point(7, 8)).X;
			sum += Gen.Shared<string>("shared") + Gen.Shared<object>(new object());
			var d = new Dictionary<string, int[]>();
			d["k"] = new int[] { 1 };
			sum += Gen.Pairs(d).Length;
			int a = 1, b = 2;
			Shapes.Swap(ref a, ref b);
			string v;
			if (Shapes.TryGet(a, out v)) sum += v.Length;
			sum += Shapes.Fixed(new int[] { 1, 2, 3 });
			sum += Shapes.Cells(new int[2, 3], new int[][] { new int[1] }, null);
			var sh = new Shapes();
			sh.Flag = 1;
			sh.Changed += (o, e) => { };
			Shapes.Name = "n";
			sum += sh.Flag;
			Console.WriteLine("forwarded: " + new Fwd.Moved().Hello());

			string lib = Path.Combine(Path.GetDirectoryName(typeof(Program).Assembly.Location), "alclib.dll");
			WeakReference wr = LoadAndRun(lib);
			if (wr == null) {
				Console.WriteLine("alc: unsupported");
			} else {
				for (int i = 0; i < 50 && wr.IsAlive; i++) {
					GC.Collect();
					GC.WaitForPendingFinalizers();
				}
				for (int i = 0; i < 10; i++) {
					GC.Collect();
					GC.WaitForPendingFinalizers();
					Thread.Sleep(20);
				}
				Console.WriteLine("alc: alive=" + wr.IsAlive);
				AfterUnload();
			}
			Checkpoint();
			Console.WriteLine("sum: " + sum);
			Console.WriteLine("app done");
			return 0;
		}
	}
}
