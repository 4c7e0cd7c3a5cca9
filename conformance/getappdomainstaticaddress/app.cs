// The app of the getappdomainstaticaddress scenario: it loads
// UnloadLibrary.dll (the classload scenario's library; its path is the
// first argument) into a collectible AssemblyLoadContext (.NET Core 3.0 and
// later; reached by reflection because mcs compiles against Mono's
// mscorlib), makes one UnloadLibrary.TestClass, unloads the context, and
// sleeps three seconds while the profiler forces collections and reads
// static field addresses.
using System;
using System.Reflection;
using System.Threading;

static class StaticAddressApp {
    static void LoadAndUnload(string path) {
        Type alcType = typeof(object).Assembly.GetType("System.Runtime.Loader.AssemblyLoadContext");
        object alc = alcType.GetConstructor(new Type[] { typeof(string), typeof(bool) })
            .Invoke(new object[] { "Collectible", true });
        var asm = (Assembly)alcType.GetMethod("LoadFromAssemblyPath").Invoke(alc, new object[] { path });
        object instance = Activator.CreateInstance(asm.GetType("UnloadLibrary.TestClass"));
        Console.WriteLine(instance.GetHashCode());
        alcType.GetMethod("Unload").Invoke(alc, null);
    }

    static int Main(string[] args) {
        LoadAndUnload(args[0]);
        Thread.Sleep(3000);
        Console.WriteLine("app done");
        return 100;
    }
}
