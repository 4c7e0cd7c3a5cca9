// The instr async wrap's cost: an async method (Work, not inlined) called
// and awaited N times, in one of two shapes (args[1]): "sync", where it
// completes without suspending (the caller's await finds the task
// complete), or "yield", where it suspends at `await Task.Yield()` and
// completes on a thread-pool thread.
//
// ASYNC_MODE says who calls the integration (the same counting code in
// every mode: CountingHooks below, a copy of BenchWrap.CountingHooks in
// bench/prof/wrap/Hooks.cs):
//
//	none   nobody (no profiler)
//	wrap   package instr (bench/prof/wrap wraps Program::Work with
//	       BenchWrap.CountingHooks; the loop is the plain one)
//	await  the app, the way a C# author writes it: an async method that
//	       calls Begin, awaits Work, and calls End with the result or the
//	       exception (WorkAwait)
//	cw     the app, the way instr does it, written in C#: Begin, call Work,
//	       and in a finally hand the task to Done at once when complete,
//	       else through ContinueWith(ExecuteSynchronously) (WorkCW)
//
// At the end the app reads the counts of whichever CountingHooks ran
// (instr's through reflection: its assembly is loaded by the profiler) and
// prints them; a count that differs from what the mode must do prints
// WRONG and exits 1.
using System;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace BenchAsyncHand
{
	public static class CountingHooks
	{
		public static readonly object State = new object();
		public static long Begins, Ends, Bad;

		public static object Begin(int id, object instance, object[] args)
		{
			Interlocked.Increment(ref Begins);
			return State;
		}

		public static void End(int id, object state, object returnValue, object exception)
		{
			if (state != State || exception != null || !(returnValue is int))
				Interlocked.Increment(ref Bad);
			Interlocked.Increment(ref Ends);
		}
	}
}

static class Program
{
	static bool suspend;

	// The target.
	[MethodImpl(MethodImplOptions.NoInlining)]
	static async Task<int> Work(int a)
	{
		if (suspend)
			await Task.Yield();
		return a + 1;
	}

	// What a C# author writes for the same effect.
	[MethodImpl(MethodImplOptions.NoInlining)]
	static async Task<int> WorkAwait(int a)
	{
		object state = null;
		try {
			state = BenchAsyncHand.CountingHooks.Begin(1, null, null);
		} catch {
		}
		int r;
		try {
			r = await Work(a);
		} catch (Exception e) {
			try {
				BenchAsyncHand.CountingHooks.End(1, state, 0, e);
			} catch {
			}
			throw;
		}
		try {
			BenchAsyncHand.CountingHooks.End(1, state, r, null);
		} catch {
		}
		return r;
	}

	static bool Keep(Exception e, out Exception exc) { exc = e; return false; }

	// What instr makes of Work (its stub), written in C#: the same
	// try/filter/finally, the task handed to Done directly when complete,
	// else through ContinueWith with a new delegate and Begin's state.
	[MethodImpl(MethodImplOptions.NoInlining)]
	static Task<int> WorkCW(int a)
	{
		object state = null;
		Exception exc = null;
		Task<int> t = null;
		try {
			state = BenchAsyncHand.CountingHooks.Begin(1, null, null);
		} catch {
		}
		try {
			try {
				t = Work(a);
				return t;
			} catch (Exception e) when (Keep(e, out exc)) {
				throw;
			}
		} finally {
			if (exc != null || t == null) {
				try {
					BenchAsyncHand.CountingHooks.End(1, state, 0, exc);
				} catch {
				}
			} else if (t.IsCompleted) {
				Done(t, state);
			} else {
				t.ContinueWith(new Action<Task, object>(Done), state, CancellationToken.None,
					TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
			}
		}
	}

	// instr's <clrprof>AsyncN::Done, in C#.
	static void Done(Task task, object state)
	{
		try {
			object exc = null;
			int r = 0;
			if (task.IsFaulted) {
				exc = task.Exception;
				Exception inner = task.Exception.InnerException;
				if (inner != null)
					exc = inner;
			} else if (task.IsCanceled) {
				exc = new TaskCanceledException(task);
			} else {
				r = ((Task<int>)task).Result;
			}
			BenchAsyncHand.CountingHooks.End(1, state, r, exc);
		} catch {
		}
	}

	[MethodImpl(MethodImplOptions.NoInlining)]
	static async Task<int> Loop(long n)
	{
		int sum = 0;
		for (long i = 0; i < n; i++)
			sum = await Work(sum);
		return sum;
	}

	[MethodImpl(MethodImplOptions.NoInlining)]
	static async Task<int> LoopAwait(long n)
	{
		int sum = 0;
		for (long i = 0; i < n; i++)
			sum = await WorkAwait(sum);
		return sum;
	}

	[MethodImpl(MethodImplOptions.NoInlining)]
	static async Task<int> LoopCW(long n)
	{
		int sum = 0;
		for (long i = 0; i < n; i++)
			sum = await WorkCW(sum);
		return sum;
	}

	// Begins, Ends and Bad of instr's BenchWrap.CountingHooks, if its
	// assembly was loaded.
	static long[] WrapCounts()
	{
		foreach (Assembly a in AppDomain.CurrentDomain.GetAssemblies()) {
			if (a.GetName().Name != "BenchWrap")
				continue;
			Type t = a.GetType("BenchWrap.CountingHooks");
			if (t == null)
				continue;
			return new long[] {
				(long)t.GetField("Begins").GetValue(null),
				(long)t.GetField("Ends").GetValue(null),
				(long)t.GetField("Bad").GetValue(null),
			};
		}
		return new long[] { 0, 0, 0 };
	}

	// The loops are not in Main: Main is where the profiler injects the
	// code that loads the integration, and must not differ between the
	// modes.
	static int Main(string[] args)
	{
		long n = args.Length > 0 ? long.Parse(args[0]) : 1000000;
		string shape = args.Length > 1 ? args[1] : "sync";
		if (shape != "sync" && shape != "yield") {
			Console.WriteLine("async: WRONG shape " + shape);
			return 2;
		}
		suspend = shape == "yield";
		string mode = Environment.GetEnvironmentVariable("ASYNC_MODE") ?? "none";
		int sum;
		switch (mode) {
		case "none":
		case "wrap":
			sum = Loop(n).GetAwaiter().GetResult();
			break;
		case "await":
			sum = LoopAwait(n).GetAwaiter().GetResult();
			break;
		case "cw":
			sum = LoopCW(n).GetAwaiter().GetResult();
			break;
		default:
			Console.WriteLine("async: WRONG mode " + mode);
			return 2;
		}
		long[] wc = WrapCounts();
		long begins = BenchAsyncHand.CountingHooks.Begins + wc[0];
		long ends = BenchAsyncHand.CountingHooks.Ends + wc[1];
		long bad = BenchAsyncHand.CountingHooks.Bad + wc[2];
		long want = mode == "none" ? 0 : n;
		bool ok = sum == (int)n && begins == want && ends == want && bad == 0 &&
			(mode != "wrap" || BenchAsyncHand.CountingHooks.Ends == 0);
		Console.WriteLine("async: sum=" + sum + " shape=" + shape + " mode=" + mode +
			" begins=" + begins + " ends=" + ends + " bad=" + bad + (ok ? "" : " WRONG"));
		return ok ? 0 : 1;
	}
}
