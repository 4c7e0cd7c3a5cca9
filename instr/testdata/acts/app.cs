using System;
using System.Collections.Generic;
using System.Threading.Tasks;

// The app of TestGoHookActions: methods taking request objects that Go
// hooks act on (GoHooks.Actions) before the methods' bodies run. Each
// method prints what its request holds when its body runs: the headers
// the hooks added, in order.
namespace Acts {
	public class Hdrs {
		List<string> items = new List<string>();
		public int Count { get { return items.Count; } }
		public void Add(string k, string v) { items.Add(k + "=" + v); }
		public bool TryAdd(string k, string v) {
			if (k == "bad") throw new InvalidOperationException("bad header");
			items.Add(k + "~" + v);
			return true;
		}
		public void Clear() { items.Clear(); }
		public string K, V;
		public void Set(string k, string v) { K = k; V = v; } // the benchmark's action
		// Non-ASCII characters as \uXXXX: the console's encoding differs
		// between runtimes.
		public override string ToString() {
			var sb = new System.Text.StringBuilder("[");
			for (int i = 0; i < items.Count; i++) {
				if (i > 0) sb.Append(' ');
				foreach (char c in items[i]) {
					if (c < 32 || c > 126) sb.Append("\\u" + ((int)c).ToString("X4")); else sb.Append(c);
				}
			}
			return sb.Append(']').ToString();
		}
	}

	public class BaseReq {
		Hdrs h = new Hdrs();
		public Hdrs Headers { get { return h; } set { h = value; } }
	}

	public class Req : BaseReq {
		public string Url;
		public void SetUrl(string u) { Url = u; }
	}

	public class Client {
		public string Name = "c";
		public string Rename(string n) { string o = Name; Name = n; return o; }
		public string Get(Req r) { return Name + " " + r.Url + " " + r.Headers; }
	}

	public static class Svc {
		// What the request holds when the body runs.
		public static string Send(Req r, int n) {
			return n + ": " + (r == null ? "null" : r.Url + " " + (r.Headers == null ? "nohdrs" : r.Headers.ToString()));
		}
		public static async Task<string> SendAsync(Req r, int n) {
			string s = Send(r, n); // the state when the body starts
			await Task.Yield();
			return "async " + s;
		}
		public static int Unresolved(Req r) { return 3; }
		[System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
		public static int Hot(Req r, int act) { return act; }
	}

	public static class Program {
		public static int Main(string[] args) {
			if (args.Length == 2 && args[0] == "hot") {
				// hot N: calls of Hot in 20 rounds of N/20 calls with act 0 (no
				// action asked) and N/20 with act 1 (the hook asks for
				// Headers.Set(k, v)), interleaved, after 200,000 of each for
				// warm-up; prints each mode's median round (the machine is
				// shared: interleaving pairs the modes under the same load).
				int n = int.Parse(args[1]) / 20;
				var q = new Req { Url = "u" };
				long sum = 0;
				for (int i = 0; i < 200000; i++) sum += Svc.Hot(q, 0) + Svc.Hot(q, 1);
				var ns = new double[2][] { new double[20], new double[20] };
				for (int round = 0; round < 20; round++) {
					for (int act = 0; act < 2; act++) {
						var sw = System.Diagnostics.Stopwatch.StartNew();
						for (int i = 0; i < n; i++) sum += Svc.Hot(q, act);
						sw.Stop();
						ns[act][round] = sw.Elapsed.TotalMilliseconds * 1e6 / n;
					}
				}
				for (int act = 0; act < 2; act++) {
					Array.Sort(ns[act]);
					Console.WriteLine("hot act=" + act + ": calls=" + (20 * n) + " ns/call=" + ((ns[act][9] + ns[act][10]) / 2).ToString("F1") +
						" min=" + ns[act][0].ToString("F1") + " max=" + ns[act][19].ToString("F1") + " sum=" + sum + " " + q.Headers.K + " " + q.Headers.V);
				}
				return 0;
			}
			for (int n = 0; n < 8; n++) {
				var r = new Req { Url = "/r" + n };
				if (n == 5) r.Headers = null;
				Console.WriteLine(Svc.Send(n == 6 ? null : r, n));
				Console.WriteLine("after " + n + ": " + (r.Headers == null ? "nohdrs" : r.Headers.Count.ToString()));
			}
			var cl = new Client();
			var g = new Req { Url = "/g" };
			Console.WriteLine(cl.Get(g));
			Console.WriteLine(cl.Get(g));
			Console.WriteLine(Svc.Unresolved(g));
			for (int n = 0; n < 2; n++) {
				var t = Svc.SendAsync(new Req { Url = "/a" + n }, n);
				Console.WriteLine(t.Result);
			}
			Console.WriteLine("done");
			return 0;
		}
	}
}
