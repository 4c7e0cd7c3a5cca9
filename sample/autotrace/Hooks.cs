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
		// One call in progress: Begin's state, handed back to End. A call
		// is not always ended on the thread that began it: a runtime-async
		// method (MethodImplAttributes.Async) that suspends at an await
		// leaves its thread's stack without End (its frame is captured, no
		// finally runs) and ends, End included, on whichever thread runs
		// its continuation. So the start travels with the call, not in a
		// per-thread stack. Frames are reused (a free list per thread) so
		// that a call allocates nothing once its thread has warmed up.
		sealed class Frame
		{
			public long start;
			public int depth; // instrumented calls on the thread's stack at Begin, this one included
			public long sp;   // where Begin's frame was on the thread's stack
			public Frame next; // in the free list
		}

		// Per thread: the calls in progress whose Begin ran on the thread,
		// innermost last, and the free frames.
		sealed class Frames
		{
			public Frame[] stack = new Frame[64];
			public int depth;
			public Frame free;
			public int nfree;
			// busy: Begin or End is running on this thread; a traced
			// method they call themselves (Stopwatch.GetTimestamp, when a
			// target names it) is not traced, instead of recursing.
			public bool busy;
		}

		const int MaxFree = 64;
		const int MaxStack = 1 << 16;

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
			long mark;
			long sp = (long)&mark;
			int d = f.depth;
			// Calls whose Begin ran at or below this point of the stack are
			// no longer on it: they suspended (runtime async) and will end
			// elsewhere, or later on a fresh frame. They leave the stack (not
			// the free list: their End is still to come).
			while (d > 0 && f.stack[d - 1].sp <= sp)
				f.stack[--d] = null;
			if (d >= f.stack.Length) {
				if (d >= MaxStack) {
					// Only stale calls could pile up this deep: forget them.
					Array.Clear(f.stack, 0, f.stack.Length);
					d = 0;
				} else {
					Array.Resize(ref f.stack, f.stack.Length * 2);
				}
			}
			Frame fr = f.free;
			if (fr != null) {
				f.free = fr.next;
				fr.next = null;
				f.nfree--;
			} else {
				fr = new Frame();
			}
			fr.sp = sp;
			fr.depth = d + 1;
			f.stack[d] = fr;
			f.depth = d + 1;
			fr.start = Now(shared);
			f.busy = false;
			return fr;
		}

		public static void End(int id, object state, object returnValue, object exception)
		{
			Frame fr = state as Frame;
			if (fr == null)
				return; // Skip, or Begin did not run for this call: nothing to time
			Frames f = frames;
			if (f == null)
				frames = f = new Frames(); // the call began on another thread
			if (f.busy)
				return;
			f.busy = true;
			Shared s = shared;
			long end = Now(s);
			// Off this thread's stack: on top when the call began here and
			// did not suspend (every synchronous call); further down when
			// calls above it suspended (they leave with it); absent when it
			// began on another thread. Only a frame taken from the top is
			// reused: no stack refers to it any more.
			bool reuse = false;
			int d = f.depth;
			if (d > 0 && f.stack[d - 1] == fr) {
				f.stack[--d] = null;
				f.depth = d;
				reuse = true;
			} else {
				for (int i = d - 2; i >= 0; i--) {
					if (f.stack[i] == fr) {
						Array.Clear(f.stack, i, d - i);
						f.depth = i;
						break;
					}
				}
			}
			long start = fr.start;
			int depth = fr.depth;
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
					r(id, Environment.CurrentManagedThreadId, depth, start, dur,
						exception == null ? null : exception.GetType().FullName);
			}
			if (reuse && f.nfree < MaxFree) {
				fr.next = f.free;
				f.free = fr;
				f.nfree++;
			}
			f.busy = false;
		}
	}
}
