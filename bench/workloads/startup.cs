// JIT-heavy start-up, meant to run with ReadyToRun disabled so that the
// framework code it touches is compiled by the JIT too: collections of
// several element types, sorting, string formatting and parsing, text
// encoding, reflection, LINQ, delegates and tasks, each used once or a few
// times. Usage: startup [REPEAT]
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Linq;
using System.Reflection;
using System.Text;
using System.Threading.Tasks;

namespace Bench
{
    public struct P1 { public int A; }
    public struct P2 { public long A; public int B; }
    public struct P3 { public double A; }
    public enum Color { Red, Green, Blue }

    public static class Startup
    {
        static int Collections<T>(T a, T b)
        {
            var l = new List<T> { a, b, a };
            var d = new Dictionary<T, int>();
            foreach (var x in l) d[x] = d.ContainsKey(x) ? d[x] + 1 : 1;
            var h = new HashSet<T>(l);
            var arr = l.ToArray();
            Array.Reverse(arr);
            return l.Count + d.Count + h.Count + arr.Length + l.IndexOf(b);
        }

        static int Sorting()
        {
            var ints = new int[200];
            var strs = new string[200];
            var r = new Random(42);
            for (int i = 0; i < ints.Length; i++) { ints[i] = r.Next(); strs[i] = "s" + r.Next(1000); }
            Array.Sort(ints);
            Array.Sort(strs, StringComparer.Ordinal);
            var sd = new SortedDictionary<string, int>();
            foreach (var s in strs) sd[s] = s.Length;
            var sl = new SortedList<int, string>();
            for (int i = 0; i < 50; i++) sl[ints[i]] = strs[i];
            return sd.Count + sl.Count + Array.BinarySearch(ints, ints[10]);
        }

        static int Text()
        {
            var sb = new StringBuilder();
            for (int i = 0; i < 20; i++)
                sb.AppendFormat(CultureInfo.InvariantCulture, "{0:D4} {1:F2} {2:X} {3} {4:yyyy-MM-dd}|", i, i / 3.0, i * 255, (Color)(i % 3), new DateTime(2020, 1, 1).AddDays(i));
            string s = sb.ToString();
            var parts = s.Split('|');
            int n = 0;
            foreach (var p in parts)
            {
                if (p.Length == 0) continue;
                var f = p.Split(' ');
                n += int.Parse(f[0], CultureInfo.InvariantCulture);
                n += (int)double.Parse(f[1], CultureInfo.InvariantCulture);
                n += (int)Enum.Parse(typeof(Color), f[3]);
                n += DateTime.ParseExact(f[4], "yyyy-MM-dd", CultureInfo.InvariantCulture).Day;
            }
            byte[] utf8 = Encoding.UTF8.GetBytes(s);
            string back = Encoding.UTF8.GetString(utf8);
            n += Convert.ToBase64String(utf8).Length + back.ToUpperInvariant().GetHashCode() % 2;
            n += string.Join(",", parts.Where(p => p.Contains("1")).Select(p => p.Trim())).Length;
            return n;
        }

        static int Linq()
        {
            var xs = Enumerable.Range(0, 500).ToList();
            var g = xs.GroupBy(x => x % 7).OrderByDescending(k => k.Key).Select(k => new { k.Key, Sum = k.Sum() }).ToArray();
            var dict = xs.Where(x => x % 3 == 0).ToDictionary(x => x, x => x.ToString());
            var joined = xs.Take(50).Join(xs.Skip(25), a => a, b => b, (a, b) => a + b).Aggregate(0, (a, b) => a ^ b);
            return g.Length + dict.Count + joined + xs.Max() + (int)xs.Average() + xs.Distinct().Count();
        }

        static int Reflect()
        {
            int n = 0;
            foreach (var t in new[] { typeof(string), typeof(List<int>), typeof(Dictionary<string, object>), typeof(Startup) })
            {
                n += t.GetMethods().Length + t.GetProperties().Length + t.GetFields(BindingFlags.NonPublic | BindingFlags.Instance).Length;
            }
            var m = typeof(Startup).GetMethod("Square", BindingFlags.NonPublic | BindingFlags.Static);
            n += (int)m.Invoke(null, new object[] { 5 });
            return n;
        }

        static int Square(int x) { return x * x; }

        static int Tasks()
        {
            var tasks = new List<Task<int>>();
            for (int i = 0; i < 4; i++)
            {
                int k = i;
                var t = new Task<int>(() => Square(k));
                t.RunSynchronously();
                tasks.Add(t);
            }
            tasks.Add(tasks[0].ContinueWith(t => t.Result + 1, TaskContinuationOptions.ExecuteSynchronously));
            Task.WaitAll(tasks.ToArray());
            Func<int, int> f = Square;
            Action<int> a = x => f(x);
            a(3);
            return tasks.Sum(t => t.Result) + f(2);
        }

        public static int Main(string[] args)
        {
            int repeat = args.Length > 0 ? int.Parse(args[0]) : 1;
            long n = 0;
            for (int r = 0; r < repeat; r++)
            {
                n += Collections(1, 2) + Collections("a", "b") + Collections(1.5, 2.5) + Collections(3L, 4L);
                n += Collections(new P1 { A = 1 }, new P1 { A = 2 }) + Collections(new P2 { A = 1 }, new P2 { B = 2 });
                n += Collections(new P3 { A = 1 }, new P3 { A = 2 }) + Collections(Color.Red, Color.Blue);
                n += Collections('x', 'y') + Collections((byte)1, (byte)2) + Collections(Guid.Empty, Guid.NewGuid());
                n += Collections(TimeSpan.Zero, TimeSpan.FromSeconds(1)) + Collections(DateTime.MinValue, DateTime.MaxValue);
                n += Sorting() + Text() + Linq() + Reflect() + Tasks();
            }
            Console.WriteLine("startup: n=" + n);
            return 0;
        }
    }
}
