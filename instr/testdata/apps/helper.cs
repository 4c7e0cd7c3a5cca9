// InstrHelper is the integration of package instr's integration tests:
// Begin and End print what they receive on stderr, one line each,
// starting "HOOK ". INSTR_THROW=begin, end or both makes them throw after
// printing (the app must not notice).
using System;
using System.Collections.Concurrent;
using System.Diagnostics;
using System.Text;

namespace InstrHelper {
	public static class Hooks {
		[ThreadStatic] static bool busy;
		[ThreadStatic] static int depth;
		static int counter;
		// When each call began, by its state: End prints the duration
		// ("HOOK took ID state=S us=N").
		static readonly ConcurrentDictionary<string, long> started = new ConcurrentDictionary<string, long>();
		static readonly bool throwBegin, throwEnd;

		static Hooks() {
			string t = Environment.GetEnvironmentVariable("INSTR_THROW") ?? "";
			throwBegin = t == "begin" || t == "both";
			throwEnd = t == "end" || t == "both";
		}

		static string Repr(object o) {
			if (o == null) return "null";
			return o.GetType().ToString() + ":" + o.ToString();
		}

		public static object Begin(int id, object instance, object[] args) {
			if (busy) return null;
			busy = true;
			string state;
			try {
				var sb = new StringBuilder();
				sb.Append("HOOK begin ").Append(id).Append(" depth=").Append(depth).Append(" this=").Append(Repr(instance)).Append(" args=");
				if (args == null) {
					sb.Append("null");
				} else {
					sb.Append('[');
					for (int i = 0; i < args.Length; i++) {
						if (i > 0) sb.Append('|');
						sb.Append(Repr(args[i]));
					}
					sb.Append(']');
				}
				state = "s" + id + "-" + (++counter);
				sb.Append(" state=").Append(state);
				Console.Error.WriteLine(sb.ToString());
				depth++;
				started[state] = Stopwatch.GetTimestamp();
			} finally {
				busy = false;
			}
			if (throwBegin) throw new InvalidOperationException("integration failure in Begin");
			return state;
		}

		public static void Failed(int id, object exception) {
			Console.Error.WriteLine("HOOK failed " + id + " " + exception.GetType().FullName + ":" + ((Exception)exception).Message);
		}

		public static void End(int id, object state, object returnValue, object exception) {
			if (busy) return;
			busy = true;
			try {
				depth--;
				Exception e = exception as Exception;
				Console.Error.WriteLine("HOOK end " + id + " depth=" + depth + " state=" + (state ?? "null") + " ret=" + Repr(returnValue) +
					" exc=" + (e == null ? "null" : e.GetType().FullName + ":" + e.Message));
				long t0;
				string s = state as string;
				if (s != null && started.TryRemove(s, out t0))
					Console.Error.WriteLine("HOOK took " + id + " state=" + s + " us=" + ((Stopwatch.GetTimestamp() - t0) * 1000000 / Stopwatch.Frequency) +
						" thread=" + Environment.CurrentManagedThreadId);
			} finally {
				busy = false;
			}
			if (throwEnd) throw new InvalidOperationException("integration failure in End");
		}
	}
}
