// The app of the gcallocate scenario: one array large enough for the large
// object heap and one small array on the pinned object heap (where the
// runtime has GC.AllocateArray: .NET 5 and later, reached by reflection
// because mcs compiles against Mono's mscorlib), both kept in fields.
using System;
using System.Reflection;

static class GCAllocateApp {
    static int[] large;
    static object pinned;

    static int Main() {
        large = new int[100000];
        MethodInfo m = typeof(GC).GetMethod("AllocateArray", BindingFlags.Public | BindingFlags.Static);
        if (m != null) {
            pinned = m.MakeGenericMethod(typeof(int)).Invoke(null, new object[] { 32, true });
        }
        Console.WriteLine("pinned array: {0}", pinned != null);
        GC.KeepAlive(large);
        return 100;
    }
}
