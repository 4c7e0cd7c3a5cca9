// The app of TestGoHookActionsHttpClient: HttpClient requests through
// GetAsync, PostAsync, SendAsync(request) and GetStringAsync to a loopback
// HttpListener of its own, which prints the headers each request arrived
// with ("GOT path traceparent=... x-clrprof=...", "-" for none) before
// answering.
using System;
using System.Net;
using System.Net.Http;
using System.Threading.Tasks;

public static class Program {
	static string H(HttpListenerRequest r, string name) {
		var v = r.Headers[name];
		return v == null ? "-" : v;
	}

	public static int Main() {
		// HttpListener takes no port 0: try ports until one is free.
		HttpListener l = null;
		string prefix = null;
		for (int i = 0; l == null; i++) {
			int port = 21000 + (Environment.ProcessId + i * 7919) % 20000;
			prefix = "http://127.0.0.1:" + port + "/";
			var c = new HttpListener();
			c.Prefixes.Add(prefix);
			try {
				c.Start();
				l = c;
			} catch (HttpListenerException) when (i < 50) {
				c.Close();
			}
		}
		_ = Task.Run(async () => {
			while (true) {
				HttpListenerContext c;
				try { c = await l.GetContextAsync(); } catch { return; }
				var r = c.Request;
				Console.WriteLine("GOT " + r.Url.AbsolutePath + " traceparent=" + H(r, "traceparent") + " x-clrprof=" + H(r, "x-clrprof"));
				var body = System.Text.Encoding.ASCII.GetBytes("ok");
				c.Response.StatusCode = 200;
				c.Response.OutputStream.Write(body, 0, body.Length);
				c.Response.Close();
			}
		});
		using (var client = new HttpClient()) {
			Console.WriteLine("get " + (int)client.GetAsync(prefix + "get").Result.StatusCode);
			Console.WriteLine("post " + (int)client.PostAsync(prefix + "post", new StringContent("hi")).Result.StatusCode);
			Console.WriteLine("send " + (int)client.SendAsync(new HttpRequestMessage(HttpMethod.Delete, prefix + "send")).Result.StatusCode);
			Console.WriteLine("string " + client.GetStringAsync(prefix + "string").Result);
		}
		l.Stop();
		Console.WriteLine("done");
		return 0;
	}
}
