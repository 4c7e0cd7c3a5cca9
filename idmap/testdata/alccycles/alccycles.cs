// alccycles: load → call → unload → collect, over and over. Each cycle
// creates a collectible AssemblyLoadContext (reached by reflection: mcs
// compiles against Mono's mscorlib, which has no such type), loads
// AlcColl.dll into it, runs AlcColl.Entry.Run, unloads the context and
// collects until it is gone. Usage: alccycles <cycles>. Prints on stdout:
//
//	alccycles: unsupported                          (no collectible contexts: .NET Core 2.x)
//	alccycles: rss start rsskb=N                    (before the first cycle)
//	alccycles: rss warm rsskb=N                     (after the first cycle)
//	alccycles: rss end rsskb=N                      (after the last)
//	alccycles: cycles=N collected=N sum=S ok=True   (ok: every Run returned what it should)
//	alccycles: done
using System;
using System.IO;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Threading;

namespace AlcCycles {
	public static class Program {
		static Type alcType;
		static ConstructorInfo ctor;
		static MethodInfo loadFromPath, unload;

		static bool FindAlc() {
			alcType = typeof(object).Assembly.GetType("System.Runtime.Loader.AssemblyLoadContext");
			if (alcType == null) {
				alcType = Type.GetType("System.Runtime.Loader.AssemblyLoadContext, System.Runtime.Loader");
			}
			if (alcType == null) return false;
			ctor = alcType.GetConstructor(new Type[] { typeof(string), typeof(bool) });
			loadFromPath = alcType.GetMethod("LoadFromAssemblyPath");
			unload = alcType.GetMethod("Unload");
			return ctor != null && loadFromPath != null && unload != null;
		}

		// Cycle runs one load and call in a frame of its own, so that nothing
		// on the caller's stack keeps the context alive.
		[MethodImpl(MethodImplOptions.NoInlining)]
		static WeakReference Cycle(string path, int i, out int result) {
			object alc = ctor.Invoke(new object[] { "alccycles-" + i, true });
			var asm = (Assembly)loadFromPath.Invoke(alc, new object[] { path });
			result = (int)asm.GetType("AlcColl.Entry").GetMethod("Run").Invoke(null, new object[] { i });
			unload.Invoke(alc, null);
			return new WeakReference(alc);
		}

		static bool Collect(WeakReference wr) {
			for (int k = 0; k < 200 && wr.IsAlive; k++) {
				GC.Collect();
				GC.WaitForPendingFinalizers();
			}
			// The context object going away starts the unload; the runtime
			// frees the assembly in the collections after it.
			for (int k = 0; k < 3; k++) {
				GC.Collect();
				GC.WaitForPendingFinalizers();
			}
			return !wr.IsAlive;
		}

		static string Rss() {
			foreach (string line in File.ReadAllLines("/proc/self/status")) {
				if (line.StartsWith("VmRSS:")) return line.Substring(6).Trim().Split(' ')[0];
			}
			return "?";
		}

		// Expected is what Entry.Run(seed) returns (see alccoll.cs): every
		// cycle runs in a fresh context, so its static counter starts at 0.
		static int Expected(int seed) {
			// IndexOf(seed+3) in descending seed+7..seed = 4; Equals = 0;
			// byKey[seed].A-seed = 0; grid: 8 + (seed+7) - seed = 15;
			// areas 4 + 10 = 14; Map = 0; "xy" = 2; catch = 1; runs-1 = 0.
			return 4 + 0 + 0 + 15 + 14 + 0 + 2 + 1 + 0;
		}

		static int Main(string[] args) {
			int n = args.Length > 0 ? int.Parse(args[0]) : 50;
			if (!FindAlc()) {
				Console.WriteLine("alccycles: unsupported");
				Console.WriteLine("alccycles: done");
				return 0;
			}
			string path = Path.Combine(Path.GetDirectoryName(typeof(Program).Assembly.Location), "AlcColl.dll");
			Console.WriteLine("alccycles: rss start rsskb=" + Rss());
			int collected = 0;
			long sum = 0;
			bool ok = true;
			for (int i = 0; i < n; i++) {
				int r;
				WeakReference wr = Cycle(path, i, out r);
				if (r != Expected(i)) {
					Console.WriteLine("alccycles: cycle " + i + " returned " + r + ", want " + Expected(i));
					ok = false;
				}
				sum += r;
				if (Collect(wr)) collected++;
				if (i == 0) Console.WriteLine("alccycles: rss warm rsskb=" + Rss());
			}
			for (int k = 0; k < 10; k++) {
				GC.Collect();
				GC.WaitForPendingFinalizers();
				Thread.Sleep(10);
			}
			Console.WriteLine("alccycles: rss end rsskb=" + Rss());
			Console.WriteLine("alccycles: cycles=" + n + " collected=" + collected + " sum=" + sum + " ok=" + ok);
			Console.WriteLine("alccycles: done");
			return ok ? 0 : 1;
		}
	}
}
