// greeter: a class library (compiled with -unsafe) for the harness test of
// CompileCS's Library, Unsafe and Reference options.
namespace Greeting
{
    public static class Greeter
    {
        public static string Greet(string name)
        {
            return "Hello, " + name + "!";
        }

        public static unsafe int Sum(int[] values)
        {
            int s = 0;
            fixed (int* p = values)
            {
                for (int i = 0; i < values.Length; i++) s += p[i];
            }
            return s;
        }
    }
}
