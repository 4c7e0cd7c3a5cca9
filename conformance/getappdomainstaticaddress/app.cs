// The app of the getappdomainstaticaddress scenario: it loads
// UnloadLibrary.dll (the classload scenario's library; its path is the
// first argument) into a collectible AssemblyLoadContext (.NET Core 3.0 and
// later; reached by reflection because mcs compiles against Mono's
// mscorlib), makes one UnloadLibrary.TestClass and unloads the context.
// Unlike upstream's app, which then only sleeps three seconds (so whether
// the library is really unloaded while the profiler looks depends on
// timing), it collects until the context is gone and a few times more, so
// that the profiler's collections always run both before and after the
// unload; then it sleeps three seconds as upstream.
using System;
using System.Reflection;
using System.Threading;

static class StaticAddressApp {
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    static WeakReference LoadAndUnload(string path) {
        Type alcType = typeof(object).Assembly.GetType("System.Runtime.Loader.AssemblyLoadContext");
        object alc = alcType.GetConstructor(new Type[] { typeof(string), typeof(bool) })
            .Invoke(new object[] { "Collectible", true });
        var asm = (Assembly)alcType.GetMethod("LoadFromAssemblyPath").Invoke(alc, new object[] { path });
        object instance = Activator.CreateInstance(asm.GetType("UnloadLibrary.TestClass"));
        Console.WriteLine(instance.GetHashCode());
        alcType.GetMethod("Unload").Invoke(alc, null);
        return new WeakReference(alc);
    }

    static int Main(string[] args) {
        WeakReference alc = LoadAndUnload(args[0]);
        for (int i = 0; i < 100 && alc.IsAlive; i++) {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        for (int i = 0; i < 3; i++) {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        Console.WriteLine("context collected: {0}", !alc.IsAlive);
        Thread.Sleep(3000);
        Console.WriteLine("app done");
        return 100;
    }
}
