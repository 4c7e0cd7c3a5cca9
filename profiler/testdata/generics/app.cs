using System;
using System.Runtime.CompilerServices;

// Pair is used with reference and value type arguments: the runtime shares
// the code of Pair<string,object> and Pair<object,string> (both
// Pair<__Canon,__Canon>), and partly shares Pair<int,string>
// (Pair<int,__Canon>) and Pair<string,int> (Pair<__Canon,int>); Pair<int,long>
// has code of its own.
public class Pair<A, B>
{
    public A First;
    public B Second;

    public Pair(A a, B b) { First = a; Second = b; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public string Show() { return "(" + First + ", " + Second + ")"; }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public C Pick<C>(C c) { return c; }
}

public static class App
{
    public static int Main()
    {
        Console.WriteLine(new Pair<string, object>("a", "b").Show());
        Console.WriteLine(new Pair<object, string>("c", "d").Show());
        Console.WriteLine(new Pair<int, string>(1, "e").Show());
        Console.WriteLine(new Pair<string, int>("f", 2).Show());
        Console.WriteLine(new Pair<int, long>(3, 4L).Show());
        Console.WriteLine(new Pair<int, string>(5, "g").Pick<double>(1.5));
        Console.WriteLine(new Pair<int, string>(6, "h").Pick<string>("i"));
        Console.WriteLine("app done");
        return 0;
    }
}
