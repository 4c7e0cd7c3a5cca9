// The instr wrap's cost: a hot small method called N times, plain
// (WRAP_MODE unset; bench/prof/wrap wraps Program::Add with an empty
// integration when it is loaded), or (WRAP_MODE=hand) the same method with
// the wrap's try/filter/finally and integration calls written by hand, the
// integration being the same empty code (Hooks below, a copy of
// bench/prof/wrap/Hooks.cs in this assembly).
using System;
using System.Runtime.CompilerServices;

namespace BenchWrapHand
{
	public static class Hooks
	{
		public static object Begin(int id, object instance, object[] args) { return null; }
		public static void End(int id, object state, object returnValue, object exception) { }
	}
}

static class Program
{
	[MethodImpl(MethodImplOptions.NoInlining)]
	static int Add(int a, int b) { return a + b; }

	static bool Keep(Exception e, out object exc) { exc = e; return false; }

	// What instr makes of Add, written in C#.
	[MethodImpl(MethodImplOptions.NoInlining)]
	static int AddHand(int a, int b)
	{
		object state = null, exc = null;
		try {
			state = BenchWrapHand.Hooks.Begin(1, null, null);
		} catch {
		}
		int ret = 0;
		try {
			try {
				ret = a + b;
				return ret;
			} catch (Exception e) when (Keep(e, out exc)) {
				throw;
			}
		} finally {
			try {
				BenchWrapHand.Hooks.End(1, state, ret, exc);
			} catch {
			}
		}
	}

	// The loop is not in Main: Main is where the profiler injects the code
	// that loads the integration, and must not differ between the modes.
	[MethodImpl(MethodImplOptions.NoInlining)]
	static int Loop(long n, bool hand)
	{
		int sum = 0;
		if (hand) {
			for (long i = 0; i < n; i++)
				sum = AddHand(sum, (int)i);
		} else {
			for (long i = 0; i < n; i++)
				sum = Add(sum, (int)i);
		}
		return sum;
	}

	static int Main(string[] args)
	{
		long n = args.Length > 0 ? long.Parse(args[0]) : 10000000;
		bool hand = Environment.GetEnvironmentVariable("WRAP_MODE") == "hand";
		int sum = Loop(n, hand);
		Console.WriteLine("wrap: sum=" + sum + " mode=" + (hand ? "hand" : "plain"));
		return 0;
	}
}
