// The attach app of package instr's tests: it calls Shop.Worker::Work
// (through Step, which may inline it) until it has run hot, prints
// "ready", then obeys lines on stdin: "call N" prints "work N -> R";
// "quit" (or end of input) prints "app done" and exits 0.
using System;
using System.Runtime.CompilerServices;

namespace Shop {
	public static class Worker {
		public static int Work(int n) { return n * 2 + 1; }

		[MethodImpl(MethodImplOptions.NoInlining)]
		public static int Step(int n) { return Work(n); }
	}

	public static class Program {
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
