// The integration of sample/autotrace: instr calls Begin at the entry of
// every instrumented method and End at each of its exits. Compiled by
// `go generate ./sample/autotrace` (mcs) into Autotrace.dll, which is
// committed and embedded in the profiler library; instr delivers it into
// the application.
using System;
using System.Diagnostics;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Threading;

[assembly: AssemblyVersion("1.0.0.0")]

namespace Autotrace
{
	public static unsafe class Hooks
	{
		// Per call: the call's start time on a stack per thread (no
		// allocation per call); Begin returns no state.
		[ThreadStatic] static long[] starts;
		[ThreadStatic] static int depth;

		[UnmanagedFunctionPointer(CallingConvention.Cdecl)]
		delegate void RecordFunc(int id, int thread, int depth, long startNs, long durNs,
			[MarshalAs(UnmanagedType.LPStr)] string exception);

		[UnmanagedFunctionPointer(CallingConvention.Cdecl)]
		delegate IntPtr SetupFunc(out int summary, out int capacity);

		static readonly RecordFunc record;
		// Summary mode: three counters per method id (calls, total ns,
		// exceptions) in the profiler's memory, read by it at Shutdown.
		static readonly long* counters;
		static readonly int capacity;
		static readonly bool summary;
		// Nanoseconds per Stopwatch tick (1 on Linux, where the timestamp is
		// CLOCK_MONOTONIC in nanoseconds).
		static readonly double nsPerTick;
		static readonly bool ticksAreNs;

		static Hooks()
		{
			nsPerTick = 1e9 / Stopwatch.Frequency;
			ticksAreNs = Stopwatch.Frequency == 1000000000;
			IntPtr setup = Clrprof.Instr.Loader.Symbol("autotrace_setup");
			IntPtr rec = Clrprof.Instr.Loader.Symbol("autotrace_record");
			if (setup == IntPtr.Zero || rec == IntPtr.Zero)
				return; // not under autotrace: Begin and End do nothing
			int sum, cap;
			IntPtr p = ((SetupFunc)Marshal.GetDelegateForFunctionPointer(setup, typeof(SetupFunc)))(out sum, out cap);
			record = (RecordFunc)Marshal.GetDelegateForFunctionPointer(rec, typeof(RecordFunc));
			summary = sum != 0 && p != IntPtr.Zero;
			counters = (long*)p;
			capacity = cap;
		}

		static long Now()
		{
			long t = Stopwatch.GetTimestamp();
			return ticksAreNs ? t : (long)(t * nsPerTick);
		}

		public static object Begin(int id, object instance, object[] args)
		{
			long[] s = starts;
			int d = depth;
			if (s == null || d >= s.Length) {
				long[] n = new long[s == null ? 64 : s.Length * 2];
				if (s != null)
					Array.Copy(s, n, s.Length);
				starts = s = n;
			}
			s[d] = Now();
			depth = d + 1;
			return null;
		}

		public static void End(int id, object state, object returnValue, object exception)
		{
			long end = Now();
			int d = depth - 1;
			if (d < 0)
				return; // an End without its Begin: nothing to time
			depth = d;
			long start = starts[d];
			long dur = end - start;
			if (summary && (uint)id < (uint)capacity) {
				long* c = counters + 3 * id;
				Interlocked.Increment(ref c[0]);
				Interlocked.Add(ref c[1], dur);
				if (exception != null)
					Interlocked.Increment(ref c[2]);
				return;
			}
			RecordFunc r = record;
			if (r != null)
				r(id, Environment.CurrentManagedThreadId, d + 1, start, dur,
					exception == null ? null : exception.GetType().FullName);
		}
	}
}
