using System;
using System.Reflection;
using System.Threading;
using System.Threading.Tasks;

// The app of TestGotraceActivity: traced calls made with no current
// activity, then inside an activity (W3C where the runtime has the format,
// with a tracestate) after an await moved the work to a pool thread, then
// inside one whose remote parent was not sampled. The
// activity is made through reflection so that mcs compiles the app too.
// It prints the activity's Id, and whether it is recorded after the
// traced call.
namespace Act {
	public static class Api {
		public static int Get(int k) { return Inner(k) + 1; }
		public static int Inner(int k) { return k * 2; }
	}

	static class A {
		internal static readonly Type T = Type.GetType("System.Diagnostics.Activity, System.Diagnostics.DiagnosticSource", true);
	}

	public static class Program {
		static async Task<int> Flow(string name, string remote) {
			object a = Activator.CreateInstance(A.T, name);
			if (remote != null) {
				A.T.GetMethod("SetParentId", new Type[] { typeof(string) }).Invoke(a, new object[] { remote });
			}
			MethodInfo fmt = A.T.GetMethod("SetIdFormat");
			if (fmt != null) {
				fmt.Invoke(a, new object[] { Enum.Parse(fmt.GetParameters()[0].ParameterType, "W3C") });
			}
			PropertyInfo ts = A.T.GetProperty("TraceStateString");
			if (ts != null) {
				ts.SetValue(a, "k1=v1");
			}
			A.T.GetMethod("Start").Invoke(a, null);
			Console.WriteLine(name + " " + (string)A.T.GetProperty("Id").GetValue(a));
			await Task.Delay(10);
			int r = Api.Get(2);
			// Whether the traced call marked the activity recorded ("n/a":
			// .NET Core 2.x's has no trace flags).
			PropertyInfo rec = A.T.GetProperty("Recorded");
			Console.WriteLine(name + " recorded " + (rec == null ? "n/a" : rec.GetValue(a).ToString()));
			A.T.GetMethod("Stop").Invoke(a, null);
			return r;
		}

		public static int Main() {
			Console.WriteLine("plain " + Api.Get(1));
			// An activity no listener sampled (its flags 00: nobody decided).
			Console.WriteLine("in activity " + Flow("local", null).Result);
			// One whose remote parent decided not to sample (flags 00).
			Console.WriteLine("in activity " + Flow("remote", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00").Result);
			return 0;
		}
	}
}
