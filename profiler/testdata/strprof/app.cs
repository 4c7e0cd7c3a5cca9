// The app of TestReadString: passes strings (a literal, one built at run
// time with characters outside ASCII, an empty one) and a non-string object
// and objects that are no strings (an array, a boxed int) to a method the
// profiler hooks.
using System;
using System.Runtime.CompilerServices;
using System.Text;

static class StrApp {
    [MethodImpl(MethodImplOptions.NoInlining)]
    static int Take(string s, object notString) { return s.Length; }

    static int Main() {
        var sb = new StringBuilder();
        sb.Append("built ");
        sb.Append('\u00e9');
        sb.Append('\u4e2d');
        sb.Append("\U0001F600");
        int n = Take("a literal", new object[1]) + Take(sb.ToString(), 42) + Take("", "x");
        Console.WriteLine("strapp: {0}", n);
        return 0;
    }
}
