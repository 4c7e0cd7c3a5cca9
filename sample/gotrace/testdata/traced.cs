using System;
using System.Diagnostics;
using System.Threading;

namespace Traced {
	public class Orders {
		int n;
		public Orders(int n) { this.n = n; }
		public int Total() {
			int t = 0;
			for (int i = 0; i < n; i++) t += Price(i);
			return t;
		}
		public int Price(int i) { return i * 10 + 1; }
		public void Fail() { throw new InvalidOperationException("no stock"); }
		public string Echo(string s) { return s; }
	}

	public static class Worker {
		public static int Work(int k) { return Step(k) + Step(k + 1); }
		public static int Step(int k) { return k * 2; }
		public static void Tick() { Thread.Sleep(1); }
	}

	public static class Program {
		public static int Main(string[] args) {
			var o = new Orders(5);
			Console.WriteLine("total " + o.Total());
			for (int i = 0; i < 2; i++) {
				try { o.Fail(); } catch (InvalidOperationException e) { Console.WriteLine("caught " + e.Message); }
			}
			Console.WriteLine(o.Echo("echo"));
			var ts = new Thread[4];
			long sum = 0;
			for (int t = 0; t < ts.Length; t++) {
				int k = t;
				ts[t] = new Thread(() => { long s = 0; for (int i = 0; i < 50; i++) s += Worker.Work(k * 100 + i); Interlocked.Add(ref sum, s); });
				ts[t].Start();
			}
			foreach (var t in ts) t.Join();
			Console.WriteLine("work " + sum);
			// With an argument: that many paced calls (about 1 ms each), timed.
			if (args.Length > 0) {
				int ticks = int.Parse(args[0]);
				var sw = Stopwatch.StartNew();
				for (int i = 0; i < ticks; i++) Worker.Tick();
				Console.Error.WriteLine("ticks " + ticks + " in " + sw.ElapsedMilliseconds + " ms");
			}
			return 0;
		}
	}
}
