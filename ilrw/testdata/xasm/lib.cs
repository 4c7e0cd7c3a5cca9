// XLib is an assembly the app does not reference: only the profiler's
// rewrite of App.Target calls into it.
namespace XLib
{
    public static class Hits
    {
        public static int Count;

        public static void Hit(string where)
        {
            Count++;
            System.Console.WriteLine("XLib.Hits.Hit " + where + " #" + Count);
        }
    }
}
