// The app of the classload scenario: loads the library given as its
// argument into a collectible AssemblyLoadContext (by reflection: mcs builds
// against Mono's mscorlib, which lacks the type), creates an instance of
// its class, unloads the context and collects until the context is gone.
using System;
using System.Reflection;
using System.Runtime.CompilerServices;

static class ClassLoadApp {
    [MethodImpl(MethodImplOptions.NoInlining)]
    static WeakReference LoadCollectible(string path) {
        Type alcType = typeof(object).Assembly.GetType("System.Runtime.Loader.AssemblyLoadContext");
        ConstructorInfo ctor = alcType.GetConstructor(new Type[] { typeof(string), typeof(bool) });
        object alc = ctor.Invoke(new object[] { "Collectible", true });
        var asm = (Assembly)alcType.GetMethod("LoadFromAssemblyPath").Invoke(alc, new object[] { path });
        object instance = Activator.CreateInstance(asm.GetType("ConfClassLib.TestClass"));
        Console.WriteLine(instance.GetHashCode() != 0);
        alcType.GetMethod("Unload").Invoke(alc, null);
        return new WeakReference(alc);
    }

    static int Main(string[] args) {
        WeakReference alc = LoadCollectible(args[0]);
        for (int i = 0; i < 100 && alc.IsAlive; i++) {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        for (int i = 0; i < 3; i++) {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        Console.WriteLine("context collected: {0}", !alc.IsAlive);
        return 100;
    }
}
