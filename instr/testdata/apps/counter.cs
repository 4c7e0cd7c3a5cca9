// A counting integration (assembly InstrHelper, like helper.cs): Begin
// and End count the calls, and the totals are printed on stderr at exit,
// "COUNTER calls=N ends=M".
using System;
using System.Threading;

namespace InstrHelper {
	public static class Hooks {
		static long calls, ends;

		static Hooks() {
			AppDomain.CurrentDomain.ProcessExit += (s, e) =>
				Console.Error.WriteLine("COUNTER calls=" + Interlocked.Read(ref calls) + " ends=" + Interlocked.Read(ref ends));
		}

		public static object Begin(int id, object instance, object[] args) {
			Interlocked.Increment(ref calls);
			return null;
		}

		public static void End(int id, object state, object returnValue, object exception) {
			Interlocked.Increment(ref ends);
		}
	}
}
