// behave: does what its first argument says, so the harness tests can check
// how Run reports each way a program can end.
//
//   exit N      print "exiting N" and return N from Main
//   echo        copy standard input to standard output
//   throw       throw an unhandled InvalidOperationException
//   failfast    Environment.FailFast("behave: failfast")
//   hang        start /bin/sleep 600 as a child, print "child <pid>", then
//               sleep forever
using System;
using System.Diagnostics;
using System.Threading;

static class Behave
{
    static int Main(string[] args)
    {
        string mode = args.Length > 0 ? args[0] : "";
        switch (mode)
        {
            case "exit":
            {
                int code = int.Parse(args[1]);
                Console.WriteLine("exiting " + code);
                return code;
            }
            case "echo":
                Console.Write(Console.In.ReadToEnd());
                return 0;
            case "throw":
                Console.WriteLine("throwing");
                Console.Out.Flush();
                throw new InvalidOperationException("behave: thrown on purpose");
            case "failfast":
                Console.WriteLine("failing fast");
                Console.Out.Flush();
                Environment.FailFast("behave: failfast");
                return 1;
            case "hang":
            {
                var p = Process.Start(new ProcessStartInfo("/bin/sleep", "600") { UseShellExecute = false });
                Console.WriteLine("child " + p.Id);
                Console.Out.Flush();
                Thread.Sleep(Timeout.Infinite);
                return 1;
            }
            default:
                Console.Error.WriteLine("behave: unknown mode '" + mode + "'");
                return 2;
        }
    }
}
