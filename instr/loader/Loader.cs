// The loader of package instr: the first managed code the SDK delivers into
// the application. The IL that instr injects at the entry of the first
// suitable method loads every helper assembly from the profiler library's
// bytes (Assembly.Load(byte[])) and hands them here; Start makes them
// resolvable by name, so that the AssemblyRefs of the rewritten methods and
// the helpers' references to each other bind to them.
//
// Compiled by `go generate ./instr/...` (mcs) into Clrprof.Instr.Loader.dll,
// which is committed and embedded in the profiler library.
using System;
using System.Reflection;
using System.Runtime.InteropServices;

[assembly: AssemblyVersion("1.0.0.0")]

namespace Clrprof.Instr
{
	public static class Loader
	{
		static Assembly[] assemblies;
		static SymbolFunc symbol;

		[UnmanagedFunctionPointer(CallingConvention.Cdecl)]
		delegate IntPtr SymbolFunc([MarshalAs(UnmanagedType.LPStr)] string name);

		// Start is called once, by reflection, from the injected IL.
		// asms: this assembly first, then the helpers; lookup: the address
		// of the profiler library's symbol lookup (dlsym on itself).
		public static void Start(Assembly[] asms, IntPtr lookup)
		{
			assemblies = asms;
			if (lookup != IntPtr.Zero)
				symbol = (SymbolFunc)Marshal.GetDelegateForFunctionPointer(lookup, typeof(SymbolFunc));
			AppDomain.CurrentDomain.AssemblyResolve += Resolve;
			// Then each helper that defines a public static class
			// Clrprof.Startup with a public static void Start() is started,
			// in delivery order; a Start that throws is reported as
			// Failed(-1, exception) and the others still run.
			for (int i = 1; i < asms.Length; i++) {
				try {
					Assembly a = asms[i];
					if (a == null)
						continue;
					Type st = a.GetType("Clrprof.Startup", false);
					if (st == null)
						continue;
					MethodInfo m = st.GetMethod("Start", BindingFlags.Public | BindingFlags.Static, null, Type.EmptyTypes, null);
					if (m != null)
						m.Invoke(null, null);
				} catch (TargetInvocationException e) {
					Failed(-1, e.InnerException);
				} catch (Exception e) {
					Failed(-1, e);
				}
			}
		}

		// Resolve answers only for the assemblies delivered by the profiler,
		// by simple name and a version at least the one asked for; anything
		// else is left to the application's own handlers.
		static Assembly Resolve(object sender, ResolveEventArgs e)
		{
			try {
				AssemblyName want = new AssemblyName(e.Name);
				Assembly[] asms = assemblies;
				if (asms == null)
					return null;
				foreach (Assembly a in asms) {
					if (a == null)
						continue;
					AssemblyName have = a.GetName();
					if (!string.Equals(have.Name, want.Name, StringComparison.OrdinalIgnoreCase))
						continue;
					if (want.Version != null && have.Version != null && have.Version < want.Version)
						continue;
					return a;
				}
			} catch {
			}
			return null;
		}

		[UnmanagedFunctionPointer(CallingConvention.Cdecl)]
		delegate void FailedFunc(int id, [MarshalAs(UnmanagedType.LPStr)] string type);
		static FailedFunc failed;

		// Failed reports that the integration of instrumented method id
		// threw exception (which the wrap then dropped): the profiler counts
		// it per method (Delivery.IntegrationErrors). Never throws.
		public static void Failed(int id, object exception)
		{
			try {
				FailedFunc f = failed;
				if (f == null) {
					IntPtr p = Symbol("clrprof_instr_failed");
					if (p == IntPtr.Zero)
						return;
					f = (FailedFunc)Marshal.GetDelegateForFunctionPointer(p, typeof(FailedFunc));
					failed = f;
				}
				f(id, exception == null ? "" : exception.GetType().FullName);
			} catch {
			}
		}

		// Symbol returns the address of an exported function of the
		// profiler library (a Go //export, for instance), or IntPtr.Zero:
		// a helper turns it into a delegate with
		// Marshal.GetDelegateForFunctionPointer to call into the profiler.
		public static IntPtr Symbol(string name)
		{
			SymbolFunc f = symbol;
			if (f == null || name == null)
				return IntPtr.Zero;
			return f(name);
		}
	}
}
