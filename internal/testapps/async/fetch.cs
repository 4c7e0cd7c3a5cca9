// The async-end test app: task-returning methods of every shape, each
// call measured by the app itself around its await ("CALL <method> <i>
// us=<n> <outcome>"), for the tests to compare with what End and the Go
// Exit hooks see. ROSLYN is defined when Roslyn compiles it (ValueTask
// needs .NET Core's libraries, which mcs does not reference).
using System;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;

namespace FetchApp
{
	public static class Api
	{
		// The example.
		public static async Task<int> FetchAsync(int id)
		{
			await Task.Delay(100);
			if (id == 3) throw new InvalidOperationException("fetch " + id + " failed");
			return id;
		}

		// Task, not Task<T>.
		public static async Task Plain(int x)
		{
			await Task.Delay(30);
		}

		// Cancelled: an OperationCanceledException thrown in an async
		// method cancels its task.
		public static async Task<int> Cancelled(int x)
		{
			var cts = new CancellationTokenSource();
			cts.Cancel();
			await Task.Delay(30);
			cts.Token.ThrowIfCancellationRequested();
			return x;
		}

		// Complete at the return: no continuation.
		public static Task<int> Ready(int x)
		{
			return Task.FromResult(x + 100);
		}

		// A reference result.
		public static async Task<string> Text(int x)
		{
			await Task.Delay(10);
			return "t" + x;
		}

#if ROSLYN
		public static async ValueTask<int> ValueDelay(int x)
		{
			await Task.Delay(30);
			return x * 3;
		}

		// Complete at the return, no Task behind it.
		public static ValueTask<int> ValueReady(int x)
		{
			return new ValueTask<int>(x + 7);
		}

		public static async ValueTask ValuePlain(int x)
		{
			await Task.Delay(10);
		}
#endif
	}

	public static class Program
	{
		static readonly Stopwatch sw = new Stopwatch();

		static void Report(string m, int i, string outcome)
		{
			Console.WriteLine("CALL {0} {1} us={2} {3}", m, i, sw.ElapsedTicks * 1000000 / Stopwatch.Frequency, outcome);
		}

		public static int Main(string[] args)
		{
			return Run().GetAwaiter().GetResult();
		}

		static async Task<int> Run()
		{
			for (int i = 1; i <= 5; i++)
			{
				sw.Restart();
				try
				{
					int r = await Api.FetchAsync(i);
					Report("FetchAsync", i, "ok " + r);
				}
				catch (InvalidOperationException e)
				{
					Report("FetchAsync", i, "exception " + e.GetType().FullName);
				}
			}
			for (int i = 1; i <= 3; i++)
			{
				sw.Restart();
				await Api.Plain(i);
				Report("Plain", i, "ok");
				sw.Restart();
				try
				{
					await Api.Cancelled(i);
				}
				catch (OperationCanceledException e)
				{
					Report("Cancelled", i, "canceled " + e.GetType().FullName);
				}
				sw.Restart();
				int v = await Api.Ready(i);
				Report("Ready", i, "ok " + v);
				sw.Restart();
				string s = await Api.Text(i);
				Report("Text", i, "ok " + s);
#if ROSLYN
				sw.Restart();
				v = await Api.ValueDelay(i);
				Report("ValueDelay", i, "ok " + v);
				sw.Restart();
				v = await Api.ValueReady(i);
				Report("ValueReady", i, "ok " + v);
				sw.Restart();
				await Api.ValuePlain(i);
				Report("ValuePlain", i, "ok");
#endif
			}
			Console.WriteLine("done");
			return 0;
		}
	}
}
