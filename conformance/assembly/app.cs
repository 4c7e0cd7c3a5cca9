// The app of the assembly scenario: twice, it loads the assembly given as
// its argument into a new collectible AssemblyLoadContext (by reflection:
// mcs builds against Mono's mscorlib, which lacks the type), runs its entry
// point, unloads the context and collects until it is gone.
using System;
using System.Reflection;
using System.Runtime.CompilerServices;

static class AssemblyApp {
    [MethodImpl(MethodImplOptions.NoInlining)]
    static WeakReference ExecuteAndUnload(string path, out int exitCode) {
        Type alcType = typeof(object).Assembly.GetType("System.Runtime.Loader.AssemblyLoadContext");
        ConstructorInfo ctor = alcType.GetConstructor(new Type[] { typeof(string), typeof(bool) });
        object alc = ctor.Invoke(new object[] { "ExecuteAndUnload", true });
        var asm = (Assembly)alcType.GetMethod("LoadFromAssemblyPath").Invoke(alc, new object[] { path });
        exitCode = (int)asm.EntryPoint.Invoke(null, new object[] { new string[0] });
        alcType.GetMethod("Unload").Invoke(alc, null);
        return new WeakReference(alc);
    }

    static int Main(string[] args) {
        for (int round = 0; round < 2; round++) {
            int exitCode;
            WeakReference alc = ExecuteAndUnload(args[0], out exitCode);
            for (int i = 0; i < 100 && alc.IsAlive; i++) {
                GC.Collect();
                GC.WaitForPendingFinalizers();
            }
            if (exitCode != 100 || alc.IsAlive) {
                Console.WriteLine("round {0}: exit code {1}, context collected {2}", round, exitCode, !alc.IsAlive);
                return 1;
            }
        }
        return 100;
    }
}
