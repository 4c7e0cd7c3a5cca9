// The app of the classload scenario: it loads UnloadLibrary.dll (its path
// is the first argument) into a collectible AssemblyLoadContext (.NET Core
// 3.0 and later; reached by reflection because mcs compiles against Mono's
// mscorlib), makes one UnloadLibrary.TestClass, unloads the context and
// collects until the context is gone.
using System;
using System.Reflection;
using System.Runtime.CompilerServices;

static class ClassLoadApp {
    [MethodImpl(MethodImplOptions.NoInlining)]
    static WeakReference LoadAndUnload(string path) {
        Type alcType = typeof(object).Assembly.GetType("System.Runtime.Loader.AssemblyLoadContext");
        object alc = alcType.GetConstructor(new Type[] { typeof(string), typeof(bool) })
            .Invoke(new object[] { "Collectible", true });
        var asm = (Assembly)alcType.GetMethod("LoadFromAssemblyPath").Invoke(alc, new object[] { path });
        object instance = Activator.CreateInstance(asm.GetType("UnloadLibrary.TestClass"));
        Console.WriteLine(instance.GetHashCode());
        GC.Collect();
        alcType.GetMethod("Unload").Invoke(alc, null);
        return new WeakReference(alc);
    }

    static int Main(string[] args) {
        WeakReference alc = LoadAndUnload(args[0]);
        for (int i = 0; i < 100 && alc.IsAlive; i++) {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        // The context object going away starts the unload; the runtime
        // frees the types in the collections after it.
        for (int i = 0; i < 3; i++) {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        Console.WriteLine("context collected: {0}", !alc.IsAlive);
        return 100;
    }
}
