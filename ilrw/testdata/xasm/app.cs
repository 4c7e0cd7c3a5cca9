using System;

// App calls Target three times; the profiler rewrites Target to call into
// XLib.dll (which App does not reference) and through App's own reference
// to Console.WriteLine.
class App
{
    static int Target(int x)
    {
        return x + 1;
    }

    static int Main()
    {
        int sum = 0;
        for (int i = 0; i < 3; i++)
        {
            sum += Target(i);
        }
        Console.WriteLine("sum=" + sum);
        Console.WriteLine("app done");
        return 0;
    }
}
