// The ExitActs app of TestGoHookExitActions: methods whose Go Exit hooks
// act when they return (instr.Action AtExit), on the value returned, on an
// argument, as an exception leaves, with an action that throws, and on a
// method returning a task (refused unless runtime async). Each line says
// what the objects hold after the call.
using System;
using System.Text;
using System.Threading.Tasks;

namespace ExitActs
{
    public static class Svc
    {
        public static StringBuilder Make(string s) { return new StringBuilder(s); }

        // Enter appends "enter-" to sb (an action at entry); the body
        // appends; Exit appends "-exit" (an action at exit).
        public static int Fill(StringBuilder sb, int n) { sb.Append("body" + n); return n; }

        // Exit asks for actions on the argument and on the result, which is
        // null as the exception leaves: the first runs, the second is skipped.
        public static StringBuilder Fail(StringBuilder sb)
        {
            sb.Append("body");
            throw new InvalidOperationException("no");
        }

        // At most 2 characters: the action at exit appending 3 throws.
        public static StringBuilder Tight() { return new StringBuilder(1, 2); }

        // Hooked with Rule.EndAtReturn: Exit runs as the task is returned.
        public static Task Start(StringBuilder sb)
        {
            sb.Append("started");
            return Task.FromResult(1);
        }

        public static async Task<StringBuilder> MakeAsync(string s)
        {
            await Task.Yield();
            return new StringBuilder(s);
        }
    }

    public static class Program
    {
        public static void Main()
        {
            Console.WriteLine("make " + Svc.Make("a"));
            var sb = new StringBuilder();
            int n = Svc.Fill(sb, 1);
            Console.WriteLine("fill " + n + " " + sb);
            var sb2 = new StringBuilder();
            try { Svc.Fail(sb2); }
            catch (InvalidOperationException e) { Console.WriteLine("fail " + e.Message + " " + sb2); }
            Console.WriteLine("tight " + Svc.Tight().Length);
            var sb3 = new StringBuilder();
            Svc.Start(sb3).Wait();
            Console.WriteLine("start " + sb3);
            Console.WriteLine("async " + Svc.MakeAsync("t").Result);
            Console.WriteLine("done");
        }
    }
}
