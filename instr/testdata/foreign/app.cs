using System;
using System.Collections.Specialized;
using System.Reflection;
using System.Threading;
using System.Threading.Tasks;

// The app of TestGoHookForeignMembers: methods whose Go hooks read members
// of types defined in other assemblies (System.Uri, exceptions, the
// caller's current System.Diagnostics.Activity) and act on one
// (NameValueCollection.Add), or act with values other than strings (a
// Note's setters; the current activity's trace flags). The activities are made through reflection so
// that mcs compiles the app too (it has no DiagnosticSource to reference).
// It prints each activity's Id, and what the hooks' action added.
namespace Foreign {
	public class MyError : InvalidOperationException {
		public MyError(string m, Exception inner) : base(m, inner) { }
	}

	public static class Svc {
		public static int Visit(Uri u, MyError e) { return u.Port; }
		public static int Unresolved(Uri u) { return 0; }
		public static int Internal(Uri u) { return 1; }
		public static int State() { return 2; }
		public static int Maybe(Uri u) { return 3; }
		public static int Stamp(NameValueCollection h) { return h.Count; }
		public static void Mark(Note n) { }
		public static void MarkWrong(Note n) { }
	}

	// What the hooks' actions with values other than strings set: a
	// string, a bool, an int, a long, and an enum of CoreLib's.
	public class Note {
		string s = "-";
		bool b;
		int i;
		long l;
		DayOfWeek d;
		public void Set(string s, bool b, int i, long l) { this.s = s; this.b = b; this.i = i; this.l = l; }
		public void Day(DayOfWeek d) { this.d = d; }
		public override string ToString() { return s + "|" + b + "|" + i + "|" + l + "|" + d; }
	}

	// A class of its own, so that DiagnosticSource is loaded when the first
	// activity starts, not with Program.
	static class Act {
		internal static readonly Type activity = Type.GetType("System.Diagnostics.Activity, System.Diagnostics.DiagnosticSource", true);
	}

	public static class Program {
		static object Start(string name) {
			Type activity = Act.activity;
			object a = Activator.CreateInstance(activity, name);
			MethodInfo fmt = activity.GetMethod("SetIdFormat");
			if (fmt != null) {
				fmt.Invoke(a, new object[] { Enum.Parse(fmt.GetParameters()[0].ParameterType, "W3C") });
			}
			PropertyInfo ts = activity.GetProperty("TraceStateString");
			if (ts != null) {
				ts.SetValue(a, "k1=v1");
			}
			activity.GetMethod("Start").Invoke(a, null);
			return a;
		}

		static string Id(object a) { return (string)Act.activity.GetProperty("Id").GetValue(a); }

		static void Stop(object a) { Act.activity.GetMethod("Stop").Invoke(a, null); }

		// Recorded: whether the current activity is recorded ("none"
		// without one, "n/a" before .NET Core 3.0, whose Activity has no
		// trace flags).
		static string Recorded() {
			object a = Act.activity.GetProperty("Current").GetValue(null);
			if (a == null)
				return "none";
			PropertyInfo p = Act.activity.GetProperty("Recorded");
			return p == null ? "n/a" : p.GetValue(a).ToString();
		}

		static void Calls(string tag) {
			var e = new MyError("bad " + tag, new ArgumentException("inner " + tag));
			Svc.Visit(new Uri("http://h.example:8081/p?q=" + tag), e);
			Svc.State();
			var h = new NameValueCollection(StringComparer.Ordinal); // culture-free: .NET Core 2.0 and this ICU disagree
			Svc.Stamp(h);
			Console.WriteLine(tag + " stamped " + (h["traceparent"] ?? "(none)"));
			var n = new Note();
			string before = Recorded();
			Svc.Mark(n);
			Console.WriteLine(tag + " recorded " + before + "->" + Recorded() + " note " + n);
			Svc.MarkWrong(n);
		}

		static async Task<bool> Flow() {
			int before = Thread.CurrentThread.ManagedThreadId;
			object a = Start("outer");
			Console.WriteLine("outer " + Id(a));
			await Task.Delay(20);
			// The continuation runs on a pool thread: the activity follows
			// the logical call (it lives in an AsyncLocal).
			bool moved = Thread.CurrentThread.ManagedThreadId != before;
			Calls("outer");
			object b = Start("inner");
			Console.WriteLine("inner " + Id(b));
			await Task.Yield();
			Calls("inner");
			Stop(b);
			Stop(a);
			return moved;
		}

		public static int Main() {
			// No activity yet, and (on most runtimes) DiagnosticSource not
			// loaded when Visit is compiled.
			Calls("none");
			Svc.Unresolved(new Uri("http://x/"));
			Svc.Internal(new Uri("http://x/"));
			Svc.Maybe(new Uri("http://maybe.example/"));
			bool moved = Flow().Result;
			Console.WriteLine("moved " + moved);
			Calls("after");
			return 0;
		}
	}
}
