// The leak the heapsnap tests look for: a static List<Leaked> (Work.Leak,
// as in the shop) whose Leaked objects each hold a byte[]. The program
// asks for its own snapshots with SIGUSR2 and waits for each to be
// written, so the test knows what the heap held at each.
using System;
using System.Collections.Generic;
using System.IO;
using System.Runtime.InteropServices;
using System.Threading;

namespace Shop
{
    public class Leaked
    {
        public byte[] Data;
        public Leaked(int kb) { Data = new byte[kb * 1024]; }
    }

    public static class Work
    {
        public static List<Leaked> Leak = new List<Leaked>();
        public static Dictionary<int, Leaked> ById;
    }

    static class Program
    {
        [DllImport("libc.so.6")] static extern int kill(int pid, int sig);
        [DllImport("libc.so.6")] static extern int getpid();

        static void Snap(string dir, int n)
        {
            string file = Path.Combine(dir, "heap-" + n + ".txt");
            kill(getpid(), 12); // SIGUSR2
            // LEAK_WAIT_MS: how long to wait for it (default 2 minutes; a
            // test that expects the snapshot to be refused waits less)
            int waitMs;
            if (!int.TryParse(Environment.GetEnvironmentVariable("LEAK_WAIT_MS"), out waitMs)) waitMs = 120000;
            for (int i = 0; i < waitMs / 100 && !File.Exists(file); i++)
                Thread.Sleep(100);
            Console.WriteLine(File.Exists(file) ? "snapshot " + n + " written" : "snapshot " + n + " missing");
        }

        static void Churn()
        {
            // garbage beside the leak: nothing holds it at the snapshot
            var tmp = new List<string>();
            for (int i = 0; i < 10000; i++) tmp.Add("x" + i);
        }

        // in a method of its own, so that no frame holds the list or a
        // Leaked at the snapshots (unoptimized code keeps every local
        // slot alive to the end of its method)
        [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
        static void LeakMore(int n, int kb)
        {
            for (int i = 0; i < n; i++) Work.Leak.Add(new Leaked(kb));
            Console.WriteLine("leaked count=" + Work.Leak.Count + " bytes=" + (long)Work.Leak.Count * kb * 1024);
        }

        // serve: leak, then wait (for a test that looks at the process from
        // outside too) until the file "quit" appears in dir
        static int Serve(string dir)
        {
            LeakMore(200, 64);
            var byId = new Dictionary<int, Leaked>();
            for (int i = 0; i < Work.Leak.Count; i++) byId[i] = Work.Leak[i];
            Work.ById = byId;
            Churn();
            File.WriteAllText(Path.Combine(dir, "ready"), getpid().ToString());
            string quit = Path.Combine(dir, "quit");
            for (int i = 0; i < 3000 && !File.Exists(quit); i++)
                Thread.Sleep(100);
            GC.KeepAlive(Work.Leak);
            Console.WriteLine(File.Exists(quit) ? "quit" : "not told to quit");
            return 0;
        }

        static int Main(string[] args)
        {
            string dir = Environment.GetEnvironmentVariable("HEAPSNAP_DIR");
            // start and end at once (a test that looks at the profiler's
            // start-up only)
            if (args.Length > 0 && args[0] == "nothing")
            {
                Console.WriteLine("nothing done");
                return 0;
            }
            if (args.Length > 0 && args[0] == "serve")
                return Serve(dir);
            LeakMore(50, 64);
            Churn();
            Snap(dir, 1);
            LeakMore(100, 64);
            Churn();
            Snap(dir, 2);
            GC.KeepAlive(Work.Leak);
            Console.WriteLine("done");
            return 0;
        }
    }
}
