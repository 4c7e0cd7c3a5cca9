using System;

namespace DApp
{
    public interface IGet
    {
        int Get();
    }

    // Impl implements IGet.Get explicitly: one MethodImpl row.
    public class Impl : IGet
    {
        int IGet.Get() { return 7; }
    }

    public static class Program
    {
        public static int Main()
        {
            IGet g = new Impl();
            Console.WriteLine("get=" + g.Get());
            Console.WriteLine("app done");
            return 0;
        }
    }
}
