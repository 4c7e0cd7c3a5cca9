// An async workload for the runtime-async tests: the same source is compiled
// classic (mcs, or Roslyn's state machines) and, with Roslyn on .NET 10 and
// 11, as runtime async (-features:runtime-async=on). Every line it prints is
// something the app measured itself, for a test to compare a profiler's view
// with. ROSLYN is defined when Roslyn compiles it (ValueTask and async
// iterators need .NET Core's libraries, which mcs does not reference).
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Threading;
using System.Threading.Tasks;

namespace AsyncApp
{
	public sealed class Res : IDisposable
	{
		public static int Disposed;
		public void Dispose() { Interlocked.Increment(ref Disposed); }
	}

	public static class Ops
	{
		// Awaits a timer, so the continuation resumes on a thread-pool thread.
		public static async Task<int> DelayThenValue(int x)
		{
			await Task.Delay(20);
			return x * 2;
		}

		public static async Task ThrowAfterAwait(int x)
		{
			await Task.Yield();
			throw new InvalidOperationException("bad " + x);
		}

		// A using around an await: a try/finally in the async body.
		public static async Task<int> UsingAround(int x)
		{
			using (var r = new Res())
			{
				await Task.Delay(1);
				return x + 1;
			}
		}

		// Returns Task, completes normally: its IL's ret returns nothing
		// (runtime async), with a finally around an await.
		public static int Finallies;
		public static async Task FinallyAround(int x)
		{
			try
			{
				await Task.Delay(1);
			}
			finally
			{
				Interlocked.Increment(ref Finallies);
			}
		}

		public static async Task<int> CatchAround(int x)
		{
			try
			{
				await ThrowAfterAwait(x);
				return 0;
			}
			catch (InvalidOperationException)
			{
				return -1;
			}
		}

		// Completes synchronously: no suspension at all.
		public static async Task<int> NoAwait(int x)
		{
			if (x < 0) await Task.Yield();
			return x;
		}

#if ROSLYN
		public static async ValueTask<int> ValueDelay(int x)
		{
			await Task.Delay(1);
			return x;
		}

		public static async IAsyncEnumerable<int> Stream(int n)
		{
			for (int i = 0; i < n; i++)
			{
				await Task.Yield();
				yield return i;
			}
		}
#endif
	}

	public static class Program
	{
		static int Iterations(string[] args) { return args.Length > 0 ? int.Parse(args[0]) : 51; }

		public static int Main(string[] args)
		{
			string wait = Environment.GetEnvironmentVariable("INSTR_WAIT_FILE");
			if (!string.IsNullOrEmpty(wait))
			{
				// For a ReJIT test: DelayThenValue runs (and is compiled)
				// before the profiler adds it as a target, at the
				// compilation of AddTargetsNow; the profiler creates the
				// file once its ReJIT request was accepted.
				Console.WriteLine("before {0}", Ops.DelayThenValue(1).GetAwaiter().GetResult());
				AddTargetsNow();
				for (int i = 0; i < 12000 && !File.Exists(wait); i++)
					Thread.Sleep(10);
				Console.WriteLine("added {0}", File.Exists(wait));
				Thread.Sleep(300);
			}
			return Run(Iterations(args)).GetAwaiter().GetResult();
		}

		[System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
		static void AddTargetsNow() { }

		static async Task<int> Run(int n)
		{
			var sw = new Stopwatch();
			long delayTicks = 0;
			int sum = 0, thrown = 0, caught = 0, usings = 0, noAwait = 0;
			for (int i = 0; i < n; i++)
			{
				sw.Restart();
				sum += await Ops.DelayThenValue(i);
				delayTicks += sw.ElapsedTicks;
				try
				{
					await Ops.ThrowAfterAwait(i);
				}
				catch (InvalidOperationException)
				{
					thrown++;
				}
				if (await Ops.CatchAround(i) == -1) caught++;
				usings += await Ops.UsingAround(i) - i;
				noAwait += await Ops.NoAwait(1);
				await Ops.FinallyAround(i);
			}
			Console.WriteLine("DelayThenValue calls={0} sum={1} mean_ms={2:F3}", n, sum, delayTicks * 1000.0 / Stopwatch.Frequency / n);
			Console.WriteLine("ThrowAfterAwait calls={0} thrown={1}", n, thrown);
			Console.WriteLine("CatchAround calls={0} caught={1}", n, caught);
			Console.WriteLine("UsingAround calls={0} disposed={1} ok={2}", n, Res.Disposed, usings);
			Console.WriteLine("NoAwait calls={0} sum={1}", n, noAwait);
			Console.WriteLine("FinallyAround calls={0} finallies={1}", n, Ops.Finallies);
#if ROSLYN
			int vsum = 0, items = 0;
			for (int i = 0; i < n; i++)
				vsum += await Ops.ValueDelay(1);
			await foreach (var x in Ops.Stream(n))
				items++;
			// A framework async method: on .NET 11 CoreLib's
			// StreamReader.ReadToEndAsyncInternal is runtime async even
			// when this app is not.
			int chars = 0;
			byte[] text = System.Text.Encoding.UTF8.GetBytes("hello, async");
			for (int i = 0; i < n; i++)
			{
				using (var r = new StreamReader(new MemoryStream(text)))
					chars += (await r.ReadToEndAsync()).Length;
			}
			Console.WriteLine("ReadToEndAsync calls={0} chars={1}", n, chars);
			Console.WriteLine("ValueDelay calls={0} sum={1}", n, vsum);
			Console.WriteLine("Stream items={0}", items);
#endif
			Console.WriteLine("done");
			return 0;
		}
	}
}
