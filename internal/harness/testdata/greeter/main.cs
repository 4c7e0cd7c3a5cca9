// The app half of the greeter test: it only works if greeter.dll is found
// next to it at run time.
using System;
using Greeting;

static class Program
{
    static int Main(string[] args)
    {
        Console.WriteLine(Greeter.Greet(args[0]) + " (sum " + Greeter.Sum(new[] { 1, 2, 3, 4, 5 }) + ")");
        return 0;
    }
}
