// The jitlog demo: a few generic classes and methods, each called with
// value and reference type arguments, so that jitlog shows the
// instantiations the runtime compiles. NoInlining keeps the small methods
// from being inlined into Main, which would compile them as part of Main.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;

namespace Demo
{
    public class MyClass<S>
    {
        public S Value;

        [MethodImpl(MethodImplOptions.NoInlining)]
        public MyClass(S value) { Value = value; }

        [MethodImpl(MethodImplOptions.NoInlining)]
        public string Foo<T>(S s, T t)
        {
            return Value + "/" + s + "/" + t;
        }

        public class Nested<U>
        {
            [MethodImpl(MethodImplOptions.NoInlining)]
            public static int Count(U[] items) { return items.Length; }
        }
    }

    public struct Point
    {
        public int X, Y;
        public Point(int x, int y) { X = x; Y = y; }
        [MethodImpl(MethodImplOptions.NoInlining)]
        public override string ToString() { return "(" + X + "," + Y + ")"; }
    }

    public static class Program
    {
        [MethodImpl(MethodImplOptions.NoInlining)]
        static T Twice<T>(T value, Func<T, T, T> add) { return add(value, value); }

        public static int Main()
        {
            var a = new MyClass<int>(1);
            Console.WriteLine(a.Foo<float>(4, 8.8f));
            var b = new MyClass<string>("s");
            Console.WriteLine(b.Foo<Point>("x", new Point(1, 2)));
            Console.WriteLine(MyClass<long>.Nested<double>.Count(new double[] { 1, 2, 3 }));
            Console.WriteLine(Twice<double>(1.5, (x, y) => x + y));
            var list = new List<Point> { new Point(3, 4) };
            Console.WriteLine(list[0]);
            Console.WriteLine("demo done");
            return 0;
        }
    }
}
