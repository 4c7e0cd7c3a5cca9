// The app of the transitions scenarios: one P/Invoke into a native library
// the test builds with gcc (DoPInvoke, with blittable arguments, or the same
// entry point declared with a bool, which needs marshalling), which calls
// back into managed code through a function pointer: a delegate marshalled
// for native code, or (on .NET 5 and later) a method marked
// UnmanagedCallersOnly. The variant to run is the first argument.
using System;
using System.Reflection;
using System.Runtime.InteropServices;

namespace System.Runtime.InteropServices {
    // The runtime knows this attribute by its name; mcs builds against
    // Mono's mscorlib, which lacks it, so the app declares it.
    [AttributeUsage(AttributeTargets.Method, Inherited = false)]
    sealed class UnmanagedCallersOnlyAttribute : Attribute {
        public Type[] CallConvs;
        public string EntryPoint;
    }
}

static class TransitionsApp {
    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
    delegate int IntCallback(int i);

    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
    delegate int BoolCallback(bool b);

    [DllImport("conftransitions", CallingConvention = CallingConvention.Cdecl)]
    static extern void DoPInvoke(IntPtr callback, int i);

    [DllImport("conftransitions", CallingConvention = CallingConvention.Cdecl, EntryPoint = "DoPInvoke")]
    static extern void DoPInvokeNonBlittable(IntPtr callback, bool b);

    static int DoDelegateReversePInvoke(int i) {
        return i * 2;
    }

    static int DoDelegateReversePInvokeNonBlittable(bool b) {
        return b ? 26 : 0;
    }

    [UnmanagedCallersOnly]
    static int DoReversePInvoke(int i) {
        return i * 2;
    }

    static IntPtr UnmanagedCallersOnlyPointer() {
        MethodInfo m = typeof(TransitionsApp).GetMethod("DoReversePInvoke", BindingFlags.NonPublic | BindingFlags.Static);
        return m.MethodHandle.GetFunctionPointer();
    }

    static int Main(string[] args) {
        switch (args.Length > 0 ? args[0] : "") {
        case "BlittableToDelegate": {
            IntCallback d = DoDelegateReversePInvoke;
            DoPInvoke(Marshal.GetFunctionPointerForDelegate(d), 13);
            GC.KeepAlive(d);
            return 100;
        }
        case "NonBlittableToDelegate": {
            BoolCallback d = DoDelegateReversePInvokeNonBlittable;
            DoPInvokeNonBlittable(Marshal.GetFunctionPointerForDelegate(d), true);
            GC.KeepAlive(d);
            return 100;
        }
        case "BlittableToUnmanagedCallersOnly":
            DoPInvoke(UnmanagedCallersOnlyPointer(), 13);
            return 100;
        case "NonBlittableToUnmanagedCallersOnly":
            DoPInvokeNonBlittable(UnmanagedCallersOnlyPointer(), true);
            return 100;
        }
        Console.WriteLine("usage: app (Blittable|NonBlittable)To(Delegate|UnmanagedCallersOnly)");
        return 1;
    }
}
