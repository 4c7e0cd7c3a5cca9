using System;
using System.Threading.Tasks;

// The app of TestGoHookMembers: methods taking and returning objects whose
// members Go hooks read (GoHooks.Members). It prints what the methods
// return, which the hooks must not change.
namespace Members {
	public enum Verb { Get = 1, Post = 2 }

	public class Inner {
		public string Name { get; set; }
	}

	public class Base {
		public int Id; // a field, of a base type
	}

	public class Request : Base {
		public string Url { get; set; }
		public int Port { get; set; }
		public Inner Child { get; set; }
		public Verb Verb { get; set; }
		public Version Ver { get; set; } // another module's type: passed as ToString()
		public double Weight { get; set; }
		public string Bad { get { throw new InvalidOperationException("getter"); } }
	}

	public class Response {
		public int Status { get; set; }
		public string Body { get; set; }
		public Inner Child { get; set; }
		public string Bad { get { if (Status == 500) throw new InvalidOperationException("status"); return "fine"; } }
	}

	public class Client {
		public string Base { get; set; }
		public Request Last;
		public int Get(Request r) { Last = r; return r.Port; }
	}

	public static class Svc {
		public static int Send(Request r, string tag) { return r == null ? -1 : r.Port + tag.Length; }
		public static string Send2(Request r) { return r == null ? "none" : r.Verb + "/" + r.Ver; }
		public static int Unresolved(Request r) { return 3; }
		public static Response Make(int status) {
			if (status == 0) return null;
			return new Response { Status = status, Body = status == 201 ? new string('y', 1100) : "body" + status, Child = status == 404 ? null : new Inner { Name = "c" + status } };
		}
		public static async Task<Response> MakeAsync(int status) {
			await Task.Yield();
			return Make(status);
		}
		[System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
		public static int Hot(Request r) { return r.Port; }
		// Slow completes ms after the call; Never's task never completes.
		public static async Task<Response> Slow(int ms) {
			await Task.Delay(ms);
			return Make(202);
		}
		public static Task<Response> Never() { return new TaskCompletionSource<Response>().Task; }
	}

	public static class Program {
		public static int Main(string[] args) {
			if ((args.Length == 2 || args.Length == 3) && args[0] == "hot") {
				// hot N: N calls of Hot, for the cost per call; hot N activity:
				// inside a current Activity (W3C where the runtime has it;
				// made through reflection: mcs has no DiagnosticSource).
				int n = int.Parse(args[1]);
				if (args.Length == 3) {
					Type at = Type.GetType("System.Diagnostics.Activity, System.Diagnostics.DiagnosticSource", true);
					object act = Activator.CreateInstance(at, "hot");
					var fmt = at.GetMethod("SetIdFormat");
					if (fmt != null) fmt.Invoke(act, new object[] { Enum.Parse(fmt.GetParameters()[0].ParameterType, "W3C") });
					at.GetMethod("Start").Invoke(act, null);
				}
				var q = new Request { Url = "http://example.com/x", Port = 1, Child = new Inner { Name = "n" } };
				long sum = 0;
				for (int i = 0; i < 200000; i++) sum += Svc.Hot(q); // warm up
				var sw = System.Diagnostics.Stopwatch.StartNew();
				for (int i = 0; i < n; i++) sum += Svc.Hot(q);
				sw.Stop();
				Console.WriteLine("hot: calls=" + n + " ns/call=" + (sw.Elapsed.TotalMilliseconds * 1e6 / n).ToString("F1") + " sum=" + sum);
				return 0;
			}
			if (args.Length == 1 && args[0] == "detach") {
				// Two calls whose tasks are left behind: Main returns while
				// Slow's waits for its delay and Never's forever.
				Svc.Slow(300);
				Svc.Never();
				Console.WriteLine("detached");
				return 0;
			}
			var a = new Request { Url = "http://a.example/b?c=d", Port = 8080, Child = new Inner { Name = "kid" }, Id = 7,
				Verb = Verb.Post, Ver = new Version(1, 2, 3), Weight = 2.5 };
			var b = new Request { Url = null, Port = -1, Child = null, Id = 0, Verb = Verb.Get };
			Console.WriteLine(Svc.Send(a, "t1"));
			Console.WriteLine(Svc.Send(b, "t22"));
			Console.WriteLine(Svc.Send(null, "t333"));
			Console.WriteLine(Svc.Send2(a));
			Console.WriteLine(Svc.Send2(b));
			Console.WriteLine(Svc.Send2(new Request { Url = new string('x', 1500), Ver = new Version(4, 0) }));
			Console.WriteLine(Svc.Unresolved(a));
			var cl = new Client { Base = "http://base/" };
			Console.WriteLine(cl.Get(a));
			Console.WriteLine(cl.Get(b));
			foreach (int s in new[] { 200, 500, 404, 0 }) {
				var r = Svc.Make(s);
				Console.WriteLine(r == null ? "null" : r.Status + " " + r.Body);
			}
			foreach (int s in new[] { 201, 500 }) {
				// The hooks' Exit runs at the task's completion, in a
				// continuation the wrap registered before the task was
				// returned, on the thread that completes it. Result can
				// return as soon as the task is complete, with the Exit
				// still running (or not yet started) on that thread; for
				// the last call Main then returns, and the profiler's
				// Shutdown waits for the Exit (instr.WaitTaskEnds).
				// (A ContinueWith registered here does not order the two:
				// when the task is already complete it runs at once.)
				var t = Svc.MakeAsync(s);
				var r = t.Result;
				Console.WriteLine("async " + r.Status + " " + r.Body);
			}
			Console.WriteLine("done");
			return 0;
		}
	}
}
