// The attach app of package instr's tests: it calls Shop.Worker::Work
// (through Step) 200 times, prints "ready", then obeys lines on stdin:
// "call N" prints "work N -> R"; "quit" (or end of input) prints "app
// done" and exits 0.
//
// Its methods are NoOptimization, which makes them ineligible for tiered
// compilation: each is compiled once, at its first call, before "ready",
// and never again by the runtime. With tiering, the warm-up's calls had
// Step and Work promoted (Tier0, then instrumented Tier0 with TieredPGO on
// .NET 8+, then Tier1) by the tiering background worker, which compiles a
// promotion only once the call-counting delay (100 ms without new Tier0
// activity) has passed: seen on 10.0.15 compiled after "ready", i.e. while
// the test attaches. A JITCompilationStarted of Step or Work after the
// attach is what the test asserts never happens (and the Delivery takes it
// for a first compilation, a host for its loader: seen once on .NET 10).
using System;
using System.Runtime.CompilerServices;

namespace Shop {
	public static class Worker {
		[MethodImpl(MethodImplOptions.NoOptimization)]
		public static int Work(int n) { return n * 2 + 1; }

		[MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.NoOptimization)]
		public static int Step(int n) { return Work(n); }
	}

	public static class Program {
		[MethodImpl(MethodImplOptions.NoOptimization)]
		static int Main() {
			long sum = 0;
			for (int i = 0; i < 200; i++) {
				sum += Worker.Step(i);
				if (i % 50 == 0) System.Threading.Thread.Sleep(50);
			}
			Console.WriteLine("ready " + sum);
			string line;
			while ((line = Console.ReadLine()) != null && line != "quit") {
				if (line.StartsWith("call ")) {
					int n = int.Parse(line.Substring(5));
					Console.WriteLine("work " + n + " -> " + Worker.Step(n));
				}
			}
			Console.WriteLine("app done");
			return 0;
		}
	}
}
