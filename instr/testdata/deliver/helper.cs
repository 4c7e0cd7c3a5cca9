using System;
using System.Reflection;

[assembly: AssemblyVersion("3.1.0.0")]

namespace DeliverHelper
{
	// An integration that throws at both ends: the wrap drops what it
	// throws and reports it through Clrprof.Instr.Loader.Failed.
	public static class Throwing
	{
		public static object Begin(int id, object instance, object[] args) { throw new InvalidOperationException("begin"); }
		public static void End(int id, object state, object returnValue, object exception) { throw new ArgumentException("end"); }
	}

	public static class Hooks
	{
		static int hits;

		// Hit is called at the entry of Program::Probe by deliverprof.
		public static void Hit()
		{
			hits++;
			// What a wrap does with an integration's exception.
			Clrprof.Instr.Loader.Failed(42, new InvalidOperationException("dropped"));
			Assembly self = typeof(Hooks).Assembly;
			Console.WriteLine("helper: hit " + hits + "; sees Lib " + Lib.Version() + " (" + Lib.OnlyInTwo() + ")" +
				"; location=\"" + self.Location + "\"" +
				"; loader symbol " + (Clrprof.Instr.Loader.Symbol("clrprof_instr_loader") != IntPtr.Zero ? "found" : "missing") +
				"; unknown symbol " + (Clrprof.Instr.Loader.Symbol("no_such_symbol_here") == IntPtr.Zero ? "absent" : "FOUND"));
		}
	}
}
