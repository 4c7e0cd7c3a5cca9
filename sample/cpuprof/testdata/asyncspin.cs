// A runtime-async workload for the sampling tests: SpinAfterAwait awaits
// Task.Yield, so the rest of it runs where the continuation resumes (a
// thread-pool thread), and there it burns CPU for about the given
// milliseconds. Compiled classic and runtime async (Roslyn, .NET 10+).
// (Not Task.Delay(1): on a loaded machine the timer had sometimes fired
// before the await looked at it, and the call ran on synchronously under
// Program.Run; Task.Yield never completes synchronously.)
using System;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace AsyncSpin
{
	public static class Ops
	{
		[MethodImpl(MethodImplOptions.NoInlining)]
		static long Mix(long x) { return x * 6364136223846793005L + 1442695040888963407L; }

		public static async Task<long> SpinAfterAwait(int ms)
		{
			await Task.Yield();
			long x = 1;
			var sw = Stopwatch.StartNew();
			while (sw.ElapsedMilliseconds < ms)
				for (int i = 0; i < 10000; i++)
					x = Mix(x);
			return x;
		}
	}

	public static class Program
	{
		public static int Main(string[] args)
		{
			return Run(args.Length > 0 ? int.Parse(args[0]) : 10).GetAwaiter().GetResult();
		}

		static async Task<int> Run(int n)
		{
			long s = 0;
			for (int i = 0; i < n; i++)
				s ^= await Ops.SpinAfterAwait(100);
			Console.WriteLine("spun {0} calls", n);
			Console.WriteLine("done");
			return 0;
		}
	}
}
