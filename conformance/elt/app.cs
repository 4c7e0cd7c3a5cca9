// The app of the elt scenario: methods that take and return primitives, a
// string, and structs of every shape the System V AMD64 ABI passes
// differently (integer only, float only in two, three and four fields,
// float and integer mixed, larger than two eightbytes). The profiler
// checks, from its enter and leave hooks, every argument and every return
// value against the values below.
using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

[StructLayout(LayoutKind.Sequential)] struct IntegerStruct { public int x, y; }
[StructLayout(LayoutKind.Sequential)] struct Fp32x2Struct { public float x, y; }
[StructLayout(LayoutKind.Sequential)] struct Fp32x3Struct { public float x, y, z; }
[StructLayout(LayoutKind.Sequential)] struct Fp32x4Struct { public float x, y, z, w; }
[StructLayout(LayoutKind.Sequential)] struct Fp64x2Struct { public double x, y; }
[StructLayout(LayoutKind.Sequential)] struct Fp64x3Struct { public double x, y, z; }
[StructLayout(LayoutKind.Sequential)] struct Fp64x4Struct { public double x, y, z, w; }
[StructLayout(LayoutKind.Sequential)] struct MixedStruct { public int x; public double d; }
[StructLayout(LayoutKind.Sequential)] struct LargeStruct {
    public int x0; public double d0; public int x1; public double d1;
    public int x2; public double d2; public int x3; public double d3;
}

static class SlowPathApp {
    [MethodImpl(MethodImplOptions.NoInlining)]
    static string SimpleArgsFunc(int x, float y, string s) {
        Console.WriteLine("x={0} y={1} s={2}", x, y, s);
        return "Hello from SimpleArgsFunc!";
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static MixedStruct MixedStructFunc(MixedStruct s) { s.x = 4; return s; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static int LargeStructFunc(LargeStruct s) { return s.x3; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static IntegerStruct IntegerStructFunc(IntegerStruct s) { s.x = 21; return s; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static Fp32x2Struct Fp32x2StructFunc(Fp32x2Struct s) { s.y = 2; return s; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static Fp32x3Struct Fp32x2StructFp32x3StructFunc(Fp32x2Struct a, Fp32x3Struct b) { return b; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static Fp32x3Struct Fp32x3StructFunc(Fp32x3Struct s) { s.z = 3; return s; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static Fp32x2Struct Fp32x3StructFp32x2StructFunc(Fp32x3Struct a, Fp32x2Struct b) { return b; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static Fp32x3Struct Fp32x3StructSingleFp32x3StructSingleFunc(Fp32x3Struct a, float f1, Fp32x3Struct b, float f2) { return b; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static Fp32x4Struct Fp32x4StructFunc(Fp32x4Struct s) { s.w = 4; return s; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static Fp32x4Struct Fp32x4StructFp32x4StructFunc(Fp32x4Struct a, Fp32x4Struct b) { return b; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static Fp64x2Struct Fp64x2StructFunc(Fp64x2Struct s) { s.y = 2; return s; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static Fp64x3Struct Fp64x2StructFp64x3StructFunc(Fp64x2Struct a, Fp64x3Struct b) { return b; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static Fp64x3Struct Fp64x3StructFunc(Fp64x3Struct s) { s.z = 3; return s; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static Fp64x2Struct Fp64x3StructFp64x2StructFunc(Fp64x3Struct a, Fp64x2Struct b) { return b; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static Fp64x3Struct Fp64x3StructDoubleFp64x3StructDoubleFunc(Fp64x3Struct a, double d1, Fp64x3Struct b, double d2) { return b; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static Fp64x4Struct Fp64x4StructFunc(Fp64x4Struct s) { s.w = 4; return s; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static Fp64x4Struct Fp64x4StructFp64x4StructFunc(Fp64x4Struct a, Fp64x4Struct b) { return b; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static double DoubleRetFunc() { return 13.0; }

    static int Main() {
        Console.WriteLine(SimpleArgsFunc(-123, -4.3f, "Hello, test!"));
        MixedStruct ms; ms.x = 1; ms.d = 1.0;
        Console.WriteLine(MixedStructFunc(ms).x);
        LargeStruct ls;
        ls.x0 = 0; ls.d0 = 0; ls.x1 = 1; ls.d1 = 1; ls.x2 = 2; ls.d2 = 2; ls.x3 = 3; ls.d3 = 3;
        Console.WriteLine(LargeStructFunc(ls));
        IntegerStruct its; its.x = 14; its.y = 256;
        Console.WriteLine(IntegerStructFunc(its).x);

        Fp32x2Struct f2; f2.x = 1.2f; f2.y = 3.5f;
        Fp32x3Struct f3; f3.x = 6.7f; f3.y = 10.11f; f3.z = 13.14f;
        Fp32x4Struct f4; f4.x = 15.17f; f4.y = 19.21f; f4.z = 22.23f; f4.w = 26.29f;
        Console.WriteLine(Fp32x2StructFunc(f2).y);
        Console.WriteLine(Fp32x2StructFp32x3StructFunc(f2, f3).z);
        Console.WriteLine(Fp32x3StructFunc(f3).z);
        Console.WriteLine(Fp32x3StructFp32x2StructFunc(f3, f2).x);
        Console.WriteLine(Fp32x3StructSingleFp32x3StructSingleFunc(f3, 1.2f, f3, 3.5f).y);
        Console.WriteLine(Fp32x4StructFunc(f4).w);
        Console.WriteLine(Fp32x4StructFp32x4StructFunc(f4, f4).z);

        Fp64x2Struct d2; d2.x = 1.2; d2.y = 3.5;
        Fp64x3Struct d3; d3.x = 6.7; d3.y = 10.11; d3.z = 13.14;
        Fp64x4Struct d4; d4.x = 15.17; d4.y = 19.21; d4.z = 22.23; d4.w = 26.29;
        Console.WriteLine(Fp64x2StructFunc(d2).y);
        Console.WriteLine(Fp64x2StructFp64x3StructFunc(d2, d3).z);
        Console.WriteLine(Fp64x3StructFunc(d3).z);
        Console.WriteLine(Fp64x3StructFp64x2StructFunc(d3, d2).x);
        Console.WriteLine(Fp64x3StructDoubleFp64x3StructDoubleFunc(d3, 1.2, d3, 3.5).y);
        Console.WriteLine(Fp64x4StructFunc(d4).w);
        Console.WriteLine(Fp64x4StructFp64x4StructFunc(d4, d4).z);

        Console.WriteLine(DoubleRetFunc());
        return 100;
    }
}
