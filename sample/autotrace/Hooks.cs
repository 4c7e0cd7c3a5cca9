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
		// Per thread: the start times of the calls in progress, a stack (no
		// allocation per call); Begin returns no state.
		sealed class Frames
		{
			public long[] starts = new long[64];
			public int depth;
			// busy: Begin or End is running on this thread; a traced
			// method they call themselves (Stopwatch.GetTimestamp, when a
			// target names it) is not traced, instead of recursing.
			public bool busy;
		}

		// Begin's state for a call made from inside Begin or End.
		static readonly object Skip = new object();

		[ThreadStatic] static Frames frames;

		[UnmanagedFunctionPointer(CallingConvention.Cdecl)]
		delegate void RecordFunc(int id, int thread, int depth, long startNs, long durNs,
			[MarshalAs(UnmanagedType.LPStr)] string exception);

		[UnmanagedFunctionPointer(CallingConvention.Cdecl)]
		delegate IntPtr SetupFunc(out int summary, out int capacity);

		// What the profiler said at the first call; a static readonly
		// field with an initializer (no static constructor), so the JIT
		// needs no class-initialization check in Begin and End.
		sealed class Shared
		{
			public RecordFunc record;
			// Summary mode: three counters per method id (calls, total ns,
			// exceptions) in the profiler's memory, read by it at Shutdown.
			public long* counters;
			public int capacity;
			public bool summary;
			// Nanoseconds per Stopwatch tick (on Linux the timestamp is
			// CLOCK_MONOTONIC in nanoseconds: ticksAreNs).
			public double nsPerTick = 1e9 / Stopwatch.Frequency;
			public bool ticksAreNs = Stopwatch.Frequency == 1000000000;

			public static Shared Create()
			{
				Shared s = new Shared();
				IntPtr setup = Clrprof.Instr.Loader.Symbol("autotrace_setup");
				IntPtr rec = Clrprof.Instr.Loader.Symbol("autotrace_record");
				if (setup == IntPtr.Zero || rec == IntPtr.Zero)
					return s; // not under autotrace: nothing is recorded
				int sum, cap;
				IntPtr p = ((SetupFunc)Marshal.GetDelegateForFunctionPointer(setup, typeof(SetupFunc)))(out sum, out cap);
				s.record = (RecordFunc)Marshal.GetDelegateForFunctionPointer(rec, typeof(RecordFunc));
				s.summary = sum != 0 && p != IntPtr.Zero;
				s.counters = (long*)p;
				s.capacity = cap;
				return s;
			}
		}

		static readonly Shared shared = Shared.Create();

		static long Now(Shared s)
		{
			long t = Stopwatch.GetTimestamp();
			return s.ticksAreNs ? t : (long)(t * s.nsPerTick);
		}

		public static object Begin(int id, object instance, object[] args)
		{
			Frames f = frames;
			if (f == null)
				frames = f = new Frames();
			if (f.busy)
				return Skip;
			f.busy = true;
			int d = f.depth;
			if (d >= f.starts.Length)
				Array.Resize(ref f.starts, f.starts.Length * 2);
			f.starts[d] = Now(shared);
			f.depth = d + 1;
			f.busy = false;
			return null;
		}

		public static void End(int id, object state, object returnValue, object exception)
		{
			if (state == Skip)
				return;
			Frames f = frames;
			if (f == null || f.depth == 0 || f.busy)
				return; // an End without its Begin: nothing to time
			f.busy = true;
			Shared s = shared;
			long end = Now(s);
			int d = --f.depth;
			long start = f.starts[d];
			long dur = end - start;
			if (s.summary && (uint)id < (uint)s.capacity) {
				long* c = s.counters + 3 * id;
				Interlocked.Increment(ref c[0]);
				Interlocked.Add(ref c[1], dur);
				if (exception != null)
					Interlocked.Increment(ref c[2]);
			} else {
				RecordFunc r = s.record;
				if (r != null)
					r(id, Environment.CurrentManagedThreadId, d + 1, start, dur,
						exception == null ? null : exception.GetType().FullName);
			}
			f.busy = false;
		}
	}
}
