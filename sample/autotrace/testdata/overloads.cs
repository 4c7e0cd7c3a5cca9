// The app of TestHttpClientOverloads: 25 HTTP exchanges with a loopback
// HttpListener, 5 through each of GetAsync, GetStringAsync,
// SendAsync(request), PostAsync and the synchronous Send, to count which
// overloads each path goes through.
using System;
using System.Net;
using System.Net.Http;
using System.Threading;
using System.Threading.Tasks;

static class Program
{
	static async Task<int> Main()
	{
		// HttpListener takes no port 0: try ports until one is free.
		HttpListener l = null;
		string prefix = null;
		for (int i = 0; l == null; i++) {
			int port = 18000 + (Environment.ProcessId + i * 7919) % 20000;
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
				var c = await l.GetContextAsync();
				var b = System.Text.Encoding.UTF8.GetBytes("ok");
				c.Response.OutputStream.Write(b, 0, b.Length);
				c.Response.Close();
			}
		});
		var h = new HttpClient();
		int n = 0;
		for (int i = 0; i < 5; i++) { (await h.GetAsync(prefix + "a")).Dispose(); n++; }
		for (int i = 0; i < 5; i++) { await h.GetStringAsync(prefix + "b"); n++; }
		for (int i = 0; i < 5; i++) { (await h.SendAsync(new HttpRequestMessage(HttpMethod.Get, prefix + "c"))).Dispose(); n++; }
		for (int i = 0; i < 5; i++) { (await h.PostAsync(prefix + "d", new StringContent("x"))).Dispose(); n++; }
		for (int i = 0; i < 5; i++) { h.Send(new HttpRequestMessage(HttpMethod.Get, prefix + "e")).Dispose(); n++; }
		Console.WriteLine("exchanges=" + n);
		return 0;
	}
}
