// The integrations bench/prof/wrap delivers: Hooks, empty (the same code
// as BenchWrapHand.Hooks in bench/workloads/wrap.cs), and CountingHooks,
// which count the calls and check that End gets Begin's state and an int
// result (the same code as BenchAsyncHand.CountingHooks in
// bench/workloads/async.cs, whose app reads the counts by reflection).
using System.Reflection;
using System.Threading;

[assembly: AssemblyVersion("1.0.0.0")]

namespace BenchWrap
{
	public static class Hooks
	{
		public static object Begin(int id, object instance, object[] args) { return null; }
		public static void End(int id, object state, object returnValue, object exception) { }
	}

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
