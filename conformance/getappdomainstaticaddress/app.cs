// The app of the getappdomainstaticaddress scenario: loads the library
// given as its argument into a collectible AssemblyLoadContext (reached by
// reflection: mcs builds against Mono's mscorlib, which lacks the type),
// creates an instance of one of its classes, unloads the context, and
// collects for a while so that the profiler sees the library's classes
// before and during their unloading.
using System;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Threading;

static class StaticsApp {
    static int nonCollectible = 7;

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void LoadCollectible(string path) {
        Type alcType = typeof(object).Assembly.GetType("System.Runtime.Loader.AssemblyLoadContext");
        ConstructorInfo ctor = alcType.GetConstructor(new Type[] { typeof(string), typeof(bool) });
        object alc = ctor.Invoke(new object[] { "Collectible", true });
        var asm = (Assembly)alcType.GetMethod("LoadFromAssemblyPath").Invoke(alc, new object[] { path });
        object instance = Activator.CreateInstance(asm.GetType("ConfUnloadLib.TestClass"));
        Console.WriteLine("instance hash {0}", instance.GetHashCode());
        alcType.GetMethod("Unload").Invoke(alc, null);
    }

    static int Main(string[] args) {
        LoadCollectible(args[0]);
        for (int i = 0; i < 20; i++) {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            Thread.Sleep(50);
        }
        Console.WriteLine("non-collectible static {0}", nonCollectible);
        return 100;
    }
}
