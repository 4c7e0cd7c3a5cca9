// A counting integration (assembly InstrHelper, like helper.cs): Begin
// and End count the calls, and the totals are printed on stderr at exit,
// "COUNTER calls=N ends=M".
using System;
using System.Threading;

namespace InstrHelper {
	public static class Hooks {
		static long calls, ends;
		[ThreadStatic] static bool busy;

		static Hooks() {
			AppDomain.CurrentDomain.ProcessExit += (s, e) =>
				Console.Error.WriteLine("COUNTER calls=" + Interlocked.Read(ref calls) + " ends=" + Interlocked.Read(ref ends));
		}

		// busy keeps the counting from counting itself when the targets
		// include framework methods it uses.
		public static object Begin(int id, object instance, object[] args) {
			if (busy) return null;
			busy = true;
			Interlocked.Increment(ref calls);
			busy = false;
			return null;
		}

		public static void End(int id, object state, object returnValue, object exception) {
			if (busy) return;
			busy = true;
			Interlocked.Increment(ref ends);
			busy = false;
		}
	}
}
