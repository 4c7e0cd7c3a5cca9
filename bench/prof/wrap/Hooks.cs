// The empty integration bench/prof/wrap delivers (the same code as
// BenchWrapHand.Hooks in bench/workloads/wrap.cs).
using System.Reflection;

[assembly: AssemblyVersion("1.0.0.0")]

namespace BenchWrap
{
	public static class Hooks
	{
		public static object Begin(int id, object instance, object[] args) { return null; }
		public static void End(int id, object state, object returnValue, object exception) { }
	}
}
