using System;
using System.Net;
using System.Net.Http;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

// The app of TestGoHookMembersHttpClient: HttpClient requests (GET, POST,
// DELETE: each goes through HttpClient.SendAsync(HttpRequestMessage,
// HttpCompletionOption, CancellationToken)) to a loopback server of its
// own (a TcpListener answering every request with the status its path
// names). It prints the port, then each response's status.
public static class Program {
	static async Task Serve(TcpListener l) {
		while (true) {
			TcpClient c;
			try { c = await l.AcceptTcpClientAsync(); } catch { return; }
			_ = Task.Run(async () => {
				using (c) {
					var s = c.GetStream();
					var buf = new byte[8192];
					var sb = new StringBuilder();
					while (!sb.ToString().Contains("\r\n\r\n")) {
						int n = await s.ReadAsync(buf, 0, buf.Length);
						if (n == 0) return;
						sb.Append(Encoding.ASCII.GetString(buf, 0, n));
					}
					string req = sb.ToString();
					string status = req.Contains(" /missing") ? "404 Not Found" : "200 OK";
					var body = Encoding.ASCII.GetBytes("ok");
					var head = Encoding.ASCII.GetBytes("HTTP/1.1 " + status + "\r\nContent-Length: 2\r\nConnection: close\r\n\r\n");
					await s.WriteAsync(head, 0, head.Length);
					await s.WriteAsync(body, 0, body.Length);
				}
			});
		}
	}

	// Done waits for t and for the continuations registered on it before
	// (the wrap's, which runs the Exit hook: synchronous continuations run
	// in order), so that the app does not exit before the last Exit ran.
	static T Done<T>(Task<T> t) {
		t.ContinueWith(_ => { }, TaskContinuationOptions.ExecuteSynchronously).Wait();
		return t.Result;
	}

	public static int Main() {
		var l = new TcpListener(IPAddress.Loopback, 0);
		l.Start();
		int port = ((IPEndPoint)l.LocalEndpoint).Port;
		Console.WriteLine("port " + port);
		var server = Serve(l);
		string url = "http://127.0.0.1:" + port;
		using (var client = new HttpClient()) {
			var r1 = Done(client.GetAsync(url + "/a?x=1&y=%C3%A9"));
			Console.WriteLine("GET " + (int)r1.StatusCode);
			var r2 = Done(client.PostAsync(url + "/missing", new StringContent("hi")));
			Console.WriteLine("POST " + (int)r2.StatusCode);
			var r3 = Done(client.SendAsync(new HttpRequestMessage(HttpMethod.Delete, url + "/c/d"), HttpCompletionOption.ResponseHeadersRead, CancellationToken.None));
			Console.WriteLine("DELETE " + (int)r3.StatusCode);
		}
		l.Stop();
		return 0;
	}
}
