// A runtime-async workload for the sampling tests: SpinAfterAwait awaits
// Task.Yield, so the rest of it runs where the continuation resumes (a
// thread-pool thread), and there it burns CPU: a fixed amount of work
// (rounds of 10,000 calls of Mix), about 100 ms on an idle core, not a
// time span, so that its share of the process's CPU does not shrink when
// the machine is loaded. Compiled classic and runtime async (Roslyn,
// .NET 10+). (Not Task.Delay(1): on a loaded machine the timer had
// sometimes fired before the await looked at it, and the call ran on
// synchronously under Program.Run; Task.Yield never completes
// synchronously.)
using System;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;

namespace AsyncSpin
{
	public static class Ops
	{
		[MethodImpl(MethodImplOptions.NoInlining)]
		static long Mix(long x) { return x * 6364136223846793005L + 1442695040888963407L; }

		public static async Task<long> SpinAfterAwait(int rounds)
		{
			await Task.Yield();
			long x = 1;
			for (int r = 0; r < rounds; r++)
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
				s ^= await Ops.SpinAfterAwait(4000);
			Console.WriteLine("spun {0} calls", n);
			Console.WriteLine("done");
			return 0;
		}
	}
}
