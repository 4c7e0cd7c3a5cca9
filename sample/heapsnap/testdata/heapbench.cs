// The app of heapsnap's cost benchmark (cost_bench_test.go): it builds a
// heap of about args[0] MB held by a static array (1024 chains of Node,
// each with a byte[args[2]] (default 200) and a string: three objects a
// link, ~300 bytes with the default), then serves until the file "quit" appears in
// args[1]. A thread sleeps 1 ms at a time and notes every gap over 5 ms
// (the application's pauses: a collection suspends it with the others);
// at the end it prints them as "gap <unix ms at the end> <ms>".
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Runtime.InteropServices;
using System.Threading;

namespace HeapBench
{
    public class Node
    {
        public Node Next;
        public byte[] Data;
        public string Name;
    }

    static class Program
    {
        [DllImport("libc.so.6")] static extern int getpid();

        public static Node[] Chains = new Node[1024];
        static volatile bool stop;

        static int Main(string[] args)
        {
            long target = long.Parse(args[0]) << 20;
            string dir = args[1];
            int payload = args.Length > 2 ? int.Parse(args[2]) : 200;
            long links = 0;
            long heap = 0;
            while (true)
            {
                for (int k = 0; k < 10000; k++, links++)
                {
                    int c = (int)(links % Chains.Length);
                    Chains[c] = new Node { Next = Chains[c], Data = new byte[payload], Name = "n" + links };
                }
                heap = GC.GetTotalMemory(false);
                if (heap >= target) break;
            }
            heap = GC.GetTotalMemory(true);
            Console.WriteLine("built links=" + links + " objects=" + (3 * links) + " heap=" + heap);

            var gaps = new List<string>();
            var sw = Stopwatch.StartNew();
            var watcher = new Thread(() =>
            {
                long last = sw.ElapsedTicks;
                while (!stop)
                {
                    Thread.Sleep(1);
                    long now = sw.ElapsedTicks;
                    double ms = (now - last) * 1000.0 / Stopwatch.Frequency;
                    if (ms > 5)
                        lock (gaps) gaps.Add("gap " + DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() + " " + ms.ToString("F1"));
                    last = now;
                }
            });
            watcher.IsBackground = true;
            watcher.Start();

            File.WriteAllText(Path.Combine(dir, "ready"), getpid().ToString());
            string quit = Path.Combine(dir, "quit");
            while (!File.Exists(quit)) Thread.Sleep(100);
            stop = true;
            watcher.Join();
            GC.KeepAlive(Chains);
            lock (gaps) foreach (var g in gaps) Console.WriteLine(g);
            Console.WriteLine("done");
            return 0;
        }
    }
}
