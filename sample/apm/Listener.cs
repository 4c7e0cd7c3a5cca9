// The managed half of sample/apm: an ActivityListener that hands every
// activity of the listened sources to the profiler when it stops. instr
// delivers this assembly into the application (which never references it)
// and the loader calls Clrprof.Startup.Start once it is loaded. Compiled by
// `go generate ./sample/apm` (Roslyn, against the net10.0 reference
// assemblies: ActivityListener is not in Mono's) into Clrprof.Apm.dll, which
// is committed and embedded in the profiler library.
//
// The span is encoded for the profiler (apm_span in main.go decodes it),
// little-endian:
//
//	u8 version (1)
//	u8[16] trace id, u8[8] span id, u8[8] parent span id (zero: root)
//	u8 trace flags, u8 parent is remote, u8 kind, u8 status
//	i64 start (Unix ns), i64 duration (ns)
//	str source name, str source version, str display name, str status description
//	i32 tag count, then per tag: str key, u8 type, value
//	    (0 string: str; 1 integer: i64; 2 boolean: u8; 3 float: f64)
//	i32 event count, then per event: str name, i64 time (Unix ns), tags as above
//
// str is an i32 byte count and UTF-8 bytes. Records reach the profiler in
// batches (Send): each record is preceded by its i32 byte count.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq.Expressions;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;

[assembly: AssemblyVersion("1.0.0.0")]

namespace Clrprof
{
	public static class Startup
	{
		public static void Start()
		{
			Apm.Listener.Start();
		}
	}
}

namespace Clrprof.Apm
{
	public static unsafe class Listener
	{
		static delegate* unmanaged[Cdecl]<byte*, int, void> report;
		static ActivityListener listener;
		// Spans whose encoding or hand-off threw: counted, never thrown
		// into the application.
		internal static long failures;

		internal const long UnixEpochTicks = 621355968000000000;

		[ThreadStatic] internal static Buffer buf;

		internal sealed class Buffer
		{
			public byte[] b = new byte[4096];
			public int n;
		}

		public static void Start()
		{
			IntPtr p = Clrprof.Instr.Loader.Symbol("clrprof_apm_span");
			if (p == IntPtr.Zero)
				return;
			report = (delegate* unmanaged[Cdecl]<byte*, int, void>)p;
			string names = Environment.GetEnvironmentVariable("CLRPROF_APM_SOURCES");
			if (string.IsNullOrEmpty(names))
				names = "Microsoft.AspNetCore,System.Net.Http,Npgsql";
			var sources = new HashSet<string>(names.Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries));
			listener = new ActivityListener {
				ShouldListenTo = s => sources.Contains(s.Name),
				// Parent-based: a span whose parent was not recorded is
				// not recorded either (its context still propagates).
				Sample = (ref ActivityCreationOptions<ActivityContext> o) =>
					o.Parent.TraceId != default && (o.Parent.TraceFlags & ActivityTraceFlags.Recorded) == 0
						? ActivitySamplingResult.PropagationData
						: ActivitySamplingResult.AllDataAndRecorded,
				ActivityStopped = Stopped,
			};
			StartBatching();
			ActivitySource.AddActivityListener(listener);
			if (sources.Contains("Microsoft.AspNetCore"))
				DiagnosticListener.AllListeners.Subscribe(new AllListeners());
		}

		static void Stopped(Activity a)
		{
			try {
				if (!a.Recorded)
					return;
				Buffer w = buf ??= new Buffer();
				w.n = 0;
				Span<byte> id = stackalloc byte[16];
				a.TraceId.CopyTo(id);
				Span<byte> sid = stackalloc byte[8];
				a.SpanId.CopyTo(sid);
				Span<byte> pid = stackalloc byte[8];
				a.ParentSpanId.CopyTo(pid);
				Header(w, id, sid, pid, (byte)a.ActivityTraceFlags, a.HasRemoteParent, (byte)a.Kind, (byte)a.Status,
					(a.StartTimeUtc.Ticks - UnixEpochTicks) * 100, a.Duration.Ticks * 100,
					a.Source.Name, a.Source.Version, a.DisplayName, a.StatusDescription);
				int at = w.n;
				I32(w, 0);
				int count = 0;
				foreach (KeyValuePair<string, object> t in a.TagObjects) {
					Tag(w, t.Key, t.Value);
					count++;
				}
				Patch(w, at, count);
				at = w.n;
				I32(w, 0);
				count = 0;
				foreach (ActivityEvent e in a.Events) {
					Str(w, e.Name);
					I64(w, (e.Timestamp.UtcTicks - UnixEpochTicks) * 100);
					int tat = w.n;
					I32(w, 0);
					int tc = 0;
					foreach (KeyValuePair<string, object> t in e.Tags) {
						Tag(w, t.Key, t.Value);
						tc++;
					}
					Patch(w, tat, tc);
					count++;
				}
				Patch(w, at, count);
				Send(w);
				if (Redis.Sessions != null)
					Redis.Finish(a);
			} catch (Exception e) {
				Fault("span", e);
			}
		}

		internal static void Header(Buffer w, ReadOnlySpan<byte> trace, ReadOnlySpan<byte> span, ReadOnlySpan<byte> parent,
			byte flags, bool remote, byte kind, byte status, long startNs, long durNs,
			string source, string version, string name, string statusDesc)
		{
			U8(w, 1);
			Bytes(w, trace);
			Bytes(w, span);
			Bytes(w, parent);
			U8(w, flags);
			U8(w, (byte)(remote ? 1 : 0));
			U8(w, kind);
			U8(w, status);
			I64(w, startNs);
			I64(w, durNs);
			Str(w, source);
			Str(w, version);
			Str(w, name);
			Str(w, statusDesc);
		}

		// Fault counts a failure of the helper's own code (the
		// application's call goes on) and tells the profiler what it was:
		// the same entry as a span, with the length negated and the bytes
		// "where: type: message" in UTF-8.
		internal static unsafe void Fault(string where, Exception e)
		{
			System.Threading.Interlocked.Increment(ref failures);
			try {
				byte[] b = Encoding.UTF8.GetBytes(where + ": " + e.GetType().FullName + ": " + e.Message);
				if (b.Length == 0)
					return;
				fixed (byte* p = b)
					report(p, -b.Length);
			} catch {
				// Nothing more can be said: counted above.
			}
		}

		// Spans are handed to the profiler in batches, not one call each:
		// a call into the profiler is a transition into Go's runtime (a
		// cgo callback on this thread), and its cost per span was most of
		// what the hand-over cost. Send appends the record, prefixed by its
		// i32 length, to the batch; the thread that fills the batch hands
		// it over, and a timer hands over what is waiting every
		// FlushMillis, so a span reaches the profiler at most that late.
		// At process exit the batch is handed over a last time and later
		// spans go one by one (batchDirect).
		internal const int BatchBytes = 64 << 10;
		internal const int FlushMillis = 200;
		static readonly object batchLock = new object();
		static byte[] batch = new byte[BatchBytes];
		static int batchN;
		static byte[] spare;
		static bool batchDirect;
		static System.Threading.Timer flusher;

		static void StartBatching()
		{
			flusher = new System.Threading.Timer(_ => {
				try {
					Flush(false);
				} catch (Exception e) {
					Fault("flush", e);
				}
			}, null, FlushMillis, FlushMillis);
			AppDomain.CurrentDomain.ProcessExit += (_, _) => {
				try {
					flusher.Dispose();
					Flush(true);
				} catch (Exception e) {
					Fault("flush", e);
				}
			};
		}

		internal static unsafe void Send(Buffer w)
		{
			byte[] full = null;
			int n = 0;
			lock (batchLock) {
				if (!batchDirect && 4 + w.n <= BatchBytes) {
					if (batchN + 4 + w.n > BatchBytes) {
						full = batch;
						n = batchN;
						batch = spare ?? new byte[BatchBytes];
						spare = null;
						batchN = 0;
					}
					System.Buffers.Binary.BinaryPrimitives.WriteInt32LittleEndian(batch.AsSpan(batchN), w.n);
					w.b.AsSpan(0, w.n).CopyTo(batch.AsSpan(batchN + 4));
					batchN += 4 + w.n;
					if (full == null)
						return;
				}
			}
			if (full != null) {
				Hand(full, n);
				return;
			}
			// Larger than a batch, or after the last batch: alone.
			byte[] one = new byte[4 + w.n];
			System.Buffers.Binary.BinaryPrimitives.WriteInt32LittleEndian(one.AsSpan(), w.n);
			w.b.AsSpan(0, w.n).CopyTo(one.AsSpan(4));
			fixed (byte* p = one)
				report(p, one.Length);
		}

		// Flush hands over what the batch holds; last makes later spans go
		// one by one.
		static void Flush(bool last)
		{
			byte[] full;
			int n;
			lock (batchLock) {
				batchDirect |= last;
				if (batchN == 0)
					return;
				full = batch;
				n = batchN;
				batch = last ? null : spare ?? new byte[BatchBytes];
				spare = null;
				batchN = 0;
			}
			Hand(full, n);
		}

		// Hand gives the profiler a batch (it copies what it keeps before
		// returning) and keeps the array for the next one.
		static unsafe void Hand(byte[] full, int n)
		{
			fixed (byte* p = full)
				report(p, n);
			lock (batchLock)
				spare = full;
		}

		internal static void Tag(Buffer w, string key, object v)
		{
			Str(w, key);
			switch (v) {
			case null:
				U8(w, 0);
				Str(w, "");
				break;
			case string s:
				U8(w, 0);
				Str(w, s);
				break;
			case bool b:
				U8(w, 2);
				U8(w, (byte)(b ? 1 : 0));
				break;
			case int i:
				U8(w, 1);
				I64(w, i);
				break;
			case long l:
				U8(w, 1);
				I64(w, l);
				break;
			case short sh:
				U8(w, 1);
				I64(w, sh);
				break;
			case double d:
				U8(w, 3);
				F64(w, d);
				break;
			case float f:
				U8(w, 3);
				F64(w, f);
				break;
			default:
				U8(w, 0);
				Str(w, Convert.ToString(v, System.Globalization.CultureInfo.InvariantCulture) ?? "");
				break;
			}
		}

		static void Room(Buffer w, int n)
		{
			if (w.n + n > w.b.Length)
				Array.Resize(ref w.b, Math.Max(w.b.Length * 2, w.n + n));
		}

		internal static void U8(Buffer w, byte v)
		{
			Room(w, 1);
			w.b[w.n++] = v;
		}

		internal static void Bytes(Buffer w, ReadOnlySpan<byte> v)
		{
			Room(w, v.Length);
			v.CopyTo(w.b.AsSpan(w.n));
			w.n += v.Length;
		}

		internal static void I32(Buffer w, int v)
		{
			Room(w, 4);
			BitConverter.TryWriteBytes(w.b.AsSpan(w.n), v);
			w.n += 4;
		}

		internal static void Patch(Buffer w, int at, int v)
		{
			BitConverter.TryWriteBytes(w.b.AsSpan(at), v);
		}

		internal static void I64(Buffer w, long v)
		{
			Room(w, 8);
			BitConverter.TryWriteBytes(w.b.AsSpan(w.n), v);
			w.n += 8;
		}

		internal static void F64(Buffer w, double v)
		{
			Room(w, 8);
			BitConverter.TryWriteBytes(w.b.AsSpan(w.n), v);
			w.n += 8;
		}

		internal static void Str(Buffer w, string s)
		{
			s ??= "";
			int n = Encoding.UTF8.GetByteCount(s);
			I32(w, n);
			Room(w, n);
			Encoding.UTF8.GetBytes(s, 0, s.Length, w.b, w.n);
			w.n += n;
		}

		// AllListeners finds ASP.NET Core's DiagnosticListener. Its
		// activity carries no attributes of its own (.NET 10): they are
		// read from the HttpContext its Stop event hands over, before the
		// activity stops, as the semantic conventions name them.
		sealed class AllListeners : IObserver<DiagnosticListener>
		{
			public void OnNext(DiagnosticListener l)
			{
				if (l.Name == "Microsoft.AspNetCore")
					// Hosting writes the Stop event only when Start is
					// enabled too (HostingApplicationDiagnostics).
					l.Subscribe(new AspNetCore(), name => name == AspNetCore.Request || name == AspNetCore.Start || name == AspNetCore.Stop ||
						name == AspNetCore.Unhandled || name == AspNetCore.DiagUnhandled);
			}
			public void OnError(Exception e) { }
			public void OnCompleted() { }
		}

		sealed class AspNetCore : IObserver<KeyValuePair<string, object>>
		{
			public const string Request = "Microsoft.AspNetCore.Hosting.HttpRequestIn";
			public const string Start = Request + ".Start";
			public const string Stop = Request + ".Stop";
			public const string Unhandled = "Microsoft.AspNetCore.Hosting.UnhandledException";
			public const string DiagUnhandled = "Microsoft.AspNetCore.Diagnostics.UnhandledException";

			// Accessors compiled once for the HttpContext type the
			// application has (no reference to ASP.NET Core here).
			static Type ctxType;
			static Func<object, string> method, path, scheme, route, protocol;
			static Func<object, int> status;

			public void OnNext(KeyValuePair<string, object> e)
			{
				try {
					Activity a = Activity.Current;
					if (a == null || a.OperationName != Request || !a.Recorded)
						return;
					if (e.Key == Stop)
						Enrich(a, e.Value);
					else if (e.Key == Unhandled || e.Key == DiagUnhandled)
						Failed(a, e.Value);
				} catch (Exception x) {
					Listener.Fault("request enrichment", x);
				}
			}

			static void Failed(Activity a, object payload)
			{
				if (payload == null)
					return;
				PropertyInfo p = payload.GetType().GetProperty("exception");
				if (p?.GetValue(payload) is Exception ex) {
					a.SetTag("error.type", ex.GetType().FullName);
					a.AddException(ex);
				}
			}

			static void Enrich(Activity a, object ctx)
			{
				if (ctx == null)
					return;
				if (ctx.GetType() != ctxType)
					Compile(ctx.GetType());
				string m = method(ctx);
				string r = route(ctx);
				int code = status(ctx);
				a.DisplayName = string.IsNullOrEmpty(r) ? m : m + " " + r;
				a.SetTag("http.request.method", m);
				a.SetTag("url.path", path(ctx));
				a.SetTag("url.scheme", scheme(ctx));
				if (!string.IsNullOrEmpty(r))
					a.SetTag("http.route", r);
				a.SetTag("http.response.status_code", code);
				string proto = protocol(ctx);
				if (proto != null && proto.StartsWith("HTTP/"))
					a.SetTag("network.protocol.version", proto.Substring(5));
				if (code >= 500) {
					a.SetStatus(ActivityStatusCode.Error);
					if (a.GetTagItem("error.type") == null)
						a.SetTag("error.type", code.ToString(System.Globalization.CultureInfo.InvariantCulture));
				}
			}

			// Compile builds the accessors: ctx.Request.Method, .Path
			// (PathString.Value), .Scheme, .Protocol, ctx.Response.StatusCode,
			// and the route template of the endpoint that ran
			// (EndpointHttpContextExtensions.GetEndpoint(ctx) as a
			// RouteEndpoint: its RoutePattern.RawText).
			static void Compile(Type t)
			{
				ParameterExpression o = Expression.Parameter(typeof(object), "o");
				Expression ctx = Expression.Convert(o, t);
				Expression req = Expression.Property(ctx, "Request");
				Expression resp = Expression.Property(ctx, "Response");
				method = Expression.Lambda<Func<object, string>>(Expression.Property(req, "Method"), o).Compile();
				scheme = Expression.Lambda<Func<object, string>>(Expression.Property(req, "Scheme"), o).Compile();
				protocol = Expression.Lambda<Func<object, string>>(Expression.Property(req, "Protocol"), o).Compile();
				path = Expression.Lambda<Func<object, string>>(Expression.Property(Expression.Property(req, "Path"), "Value"), o).Compile();
				status = Expression.Lambda<Func<object, int>>(Expression.Property(resp, "StatusCode"), o).Compile();
				route = _ => null;
				Type ext = Type.GetType("Microsoft.AspNetCore.Http.EndpointHttpContextExtensions, Microsoft.AspNetCore.Http.Abstractions");
				Type re = Type.GetType("Microsoft.AspNetCore.Routing.RouteEndpoint, Microsoft.AspNetCore.Routing");
				MethodInfo get = ext?.GetMethod("GetEndpoint", new[] { Type.GetType("Microsoft.AspNetCore.Http.HttpContext, Microsoft.AspNetCore.Http.Abstractions") });
				if (get != null && re != null) {
					// o => (GetEndpoint((HttpContext)o) as RouteEndpoint)?.RoutePattern.RawText
					ParameterExpression ep = Expression.Variable(re, "ep");
					Expression call = Expression.Call(get, Expression.Convert(o, get.GetParameters()[0].ParameterType));
					Expression body = Expression.Block(typeof(string), new[] { ep },
						Expression.Assign(ep, Expression.TypeAs(call, re)),
						Expression.Condition(Expression.Equal(ep, Expression.Constant(null, re)),
							Expression.Constant(null, typeof(string)),
							Expression.Property(Expression.Property(ep, "RoutePattern"), "RawText")));
					route = Expression.Lambda<Func<object, string>>(body, o).Compile();
				}
				ctxType = t;
			}

			public void OnError(Exception e) { }
			public void OnCompleted() { }
		}

		// Failures is how many spans could not be handed over.
		public static long Failures => System.Threading.Interlocked.Read(ref failures);
	}
}

namespace Clrprof.Apm
{
	// Redis is the integration of StackExchange.Redis, which has no
	// ActivitySource: instr wraps ConnectionMultiplexer.GetDatabase, whose
	// Begin registers (once per multiplexer) the library's own profiling
	// hook, a Func<ProfilingSession> asked before each command. It answers
	// a session per current recorded activity (the request's, say); when
	// that activity stops, its session is finished and each command it
	// holds becomes a client span under it, with the command's own start
	// and elapsed time. A multiplexer has one profiler: one the
	// application registered itself is replaced (see docs/apm.md). Nothing
	// here references StackExchange.Redis: its types are reached by
	// reflection, and the accessors compiled once.
	public static class Redis
	{
		internal static ConditionalWeakTable<Activity, object> Sessions;
		static readonly ConditionalWeakTable<object, object> registered = new ConditionalWeakTable<object, object>();
		static Type sessionType;
		static Func<object, System.Collections.IEnumerable> finish;
		static Func<object, string> command;
		static Func<object, int> db;
		static Func<object, System.Net.EndPoint> endpoint;
		static Func<object, DateTime> created;
		static Func<object, TimeSpan> elapsed;

		public static object Begin(int id, object instance, object[] args)
		{
			try {
				if (instance != null && !registered.TryGetValue(instance, out _)) {
					registered.AddOrUpdate(instance, instance);
					Register(instance);
				}
			} catch (Exception e) {
				Listener.Fault("redis registration", e);
			}
			return null;
		}

		public static void End(int id, object state, object returnValue, object exception)
		{
		}

		static void Register(object mux)
		{
			lock (registered) {
				if (sessionType == null)
					Compile(mux.GetType().Assembly);
			}
			if (sessionType == null)
				return;
			Type fn = typeof(Func<>).MakeGenericType(sessionType);
			MethodInfo reg = mux.GetType().GetMethod("RegisterProfiler", new[] { fn });
			if (reg == null)
				return;
			// () => (ProfilingSession)Redis.Session()
			Delegate d = Expression.Lambda(fn, Expression.Convert(Expression.Call(typeof(Redis).GetMethod(nameof(Session), BindingFlags.NonPublic | BindingFlags.Static)), sessionType)).Compile();
			reg.Invoke(mux, new object[] { d });
		}

		static void Compile(Assembly se)
		{
			Type st = se.GetType("StackExchange.Redis.Profiling.ProfilingSession");
			Type pc = se.GetType("StackExchange.Redis.Profiling.IProfiledCommand");
			if (st == null || pc == null)
				return;
			ParameterExpression o = Expression.Parameter(typeof(object), "o");
			MethodInfo fin = st.GetMethod("FinishProfiling", Type.EmptyTypes);
			finish = Expression.Lambda<Func<object, System.Collections.IEnumerable>>(
				Expression.Convert(Expression.Call(Expression.Convert(o, st), fin), typeof(System.Collections.IEnumerable)), o).Compile();
			Expression c = Expression.Convert(o, pc);
			command = Expression.Lambda<Func<object, string>>(Expression.Property(c, "Command"), o).Compile();
			db = Expression.Lambda<Func<object, int>>(Expression.Property(c, "Db"), o).Compile();
			endpoint = Expression.Lambda<Func<object, System.Net.EndPoint>>(Expression.Property(c, "EndPoint"), o).Compile();
			created = Expression.Lambda<Func<object, DateTime>>(Expression.Property(c, "CommandCreated"), o).Compile();
			elapsed = Expression.Lambda<Func<object, TimeSpan>>(Expression.Property(c, "ElapsedTime"), o).Compile();
			Sessions = new ConditionalWeakTable<Activity, object>();
			sessionType = st;
		}

		// Session answers the library before each command.
		static object Session()
		{
			Activity a = Activity.Current;
			if (a == null || !a.Recorded || Sessions == null)
				return null;
			return Sessions.GetValue(a, _ => Activator.CreateInstance(sessionType, new object[] { null }));
		}

		// Finish turns the commands of a's session into spans under a.
		internal static void Finish(Activity a)
		{
			if (!Sessions.TryGetValue(a, out object s))
				return;
			Sessions.Remove(a);
			Span<byte> trace = stackalloc byte[16];
			a.TraceId.CopyTo(trace);
			Span<byte> parent = stackalloc byte[8];
			a.SpanId.CopyTo(parent);
			Span<byte> span = stackalloc byte[8];
			foreach (object cmd in finish(s)) {
				Listener.Buffer w = Listener.buf ??= new Listener.Buffer();
				w.n = 0;
				ActivitySpanId.CreateRandom().CopyTo(span);
				DateTime start = created(cmd);
				if (start.Kind == DateTimeKind.Local)
					start = start.ToUniversalTime();
				string name = command(cmd);
				Listener.Header(w, trace, span, parent, (byte)a.ActivityTraceFlags, false, (byte)ActivityKind.Client, 0,
					(start.Ticks - Listener.UnixEpochTicks) * 100, elapsed(cmd).Ticks * 100,
					"StackExchange.Redis", "", name, "");
				int at = w.n;
				Listener.I32(w, 0);
				int n = 0;
				void tag(string k, object v) { Listener.Tag(w, k, v); n++; }
				tag("db.system.name", "redis");
				tag("db.system", "redis");
				tag("db.operation.name", name);
				tag("db.redis.database_index", db(cmd));
				switch (endpoint(cmd)) {
				case System.Net.IPEndPoint ip:
					tag("server.address", ip.Address.ToString());
					tag("server.port", ip.Port);
					tag("network.peer.address", ip.Address.ToString());
					tag("network.peer.port", ip.Port);
					break;
				case System.Net.DnsEndPoint dns:
					tag("server.address", dns.Host);
					tag("server.port", dns.Port);
					break;
				}
				Listener.Patch(w, at, n);
				Listener.I32(w, 0); // no events
				Listener.Send(w);
			}
		}
	}
}
