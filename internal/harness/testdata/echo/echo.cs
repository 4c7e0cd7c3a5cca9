// An interactive app for harness.Start's test: it says "ready", echoes each
// line of stdin as "echo: <line>", exits with status N on "exit N", and
// exits 0 at the end of stdin.
using System;

static class Echo
{
    static int Main()
    {
        Console.WriteLine("ready");
        Console.Out.Flush();
        string line;
        while ((line = Console.ReadLine()) != null)
        {
            if (line.StartsWith("exit "))
            {
                Console.WriteLine("bye");
                return int.Parse(line.Substring(5));
            }
            Console.WriteLine("echo: " + line);
            Console.Out.Flush();
        }
        Console.WriteLine("eof");
        return 0;
    }
}
