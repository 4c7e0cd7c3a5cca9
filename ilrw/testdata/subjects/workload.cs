// A workload that makes the runtime compile a few thousand framework
// methods (with ReadyToRun off): collections, LINQ, strings, formatting,
// regular expressions, encodings, tasks, reflection. (No System.Xml: on
// .NET Core 3.1 its facade wants libssl, which the test machines lack.)
using System;
using System.Collections.Generic;
using System.Collections.Concurrent;
using System.Globalization;
using System.IO;
using System.Numerics;
using System.Linq;
using System.Linq.Expressions;
using System.Reflection;
using System.Text;
using System.Text.RegularExpressions;
using System.Threading;
using System.Threading.Tasks;

static class Workload
{
    class Item
    {
        public string Name;
        public int Group;
        public double Price;
    }

    enum Color { Red, Green, Blue }

    static async Task<int> SumAsync(int n)
    {
        int s = 0;
        for (int i = 0; i < n; i++)
        {
            s += await Task.Run(() => i * i);
        }
        return s;
    }

    public static string Run()
    {
        var sb = new StringBuilder();
        var items = Enumerable.Range(0, 200).Select(i => new Item { Name = "item" + i, Group = i % 7, Price = i * 1.25 }).ToList();
        var groups = items.GroupBy(x => x.Group).OrderByDescending(g => g.Key).Select(g => g.Key + ":" + g.Count() + ":" + g.Sum(x => x.Price).ToString("F2", CultureInfo.InvariantCulture));
        sb.Append(string.Join(",", groups)).Append('\n');
        var dict = items.ToDictionary(x => x.Name, x => x.Price);
        var sorted = new SortedDictionary<string, double>(dict);
        sb.Append(sorted.First().Key).Append(sorted.Last().Key).Append('\n');
        var joined = from a in items where a.Group == 1 join b in items on a.Group equals b.Group - 1 select a.Name + b.Name;
        sb.Append(joined.Count()).Append('\n');
        var set = new HashSet<int>(items.Select(x => x.Group));
        set.IntersectWith(new[] { 1, 3, 5, 9 });
        sb.Append(set.Count).Append('\n');
        var lst = new List<string>();
        foreach (var it in items.Take(10)) lst.Insert(0, it.Name);
        lst.Sort(StringComparer.OrdinalIgnoreCase);
        sb.Append(lst[0]).Append(lst.IndexOf("item3")).Append('\n');
        var arr = items.Select(x => x.Price).ToArray();
        Array.Sort(arr, (a, b) => b.CompareTo(a));
        Array.Reverse(arr);
        sb.Append(arr[0]).Append(arr.Max()).Append(arr.Average()).Append('\n');
        var text = "The quick brown fox jumps over the lazy dog 12345 times on 2024-01-02";
        var re = new Regex(@"(\w+) (\d+)|(\d{4})-(\d{2})-(\d{2})");
        foreach (Match m in re.Matches(text)) sb.Append(m.Value).Append('|');
        sb.Append(Regex.Replace(text, "[aeiou]", "*")).Append('\n');
        sb.Append(text.ToUpperInvariant().Replace("THE", "A").PadLeft(80, '.').Substring(5, 20).Trim()).Append('\n');
        sb.Append(string.Format(CultureInfo.InvariantCulture, "{0,10:N3}|{1:X8}|{2:yyyy-MM-dd}|{3}", 12345.678, 48879, new DateTime(2020, 5, 17), TimeSpan.FromMinutes(93))).Append('\n');
        sb.Append(double.Parse("3.25", CultureInfo.InvariantCulture) + int.Parse("42") + long.Parse("-7")).Append('\n');
        var bytes = Encoding.UTF8.GetBytes("héllo wörld");
        sb.Append(Convert.ToBase64String(bytes)).Append(BitConverter.ToString(bytes)).Append(Encoding.UTF8.GetString(bytes)).Append('\n');
        sb.Append(Guid.Parse("0f8fad5b-d9cb-469f-a165-70867728950e").ToString("N")).Append('\n');
        sb.Append((Color)Enum.Parse(typeof(Color), "Blue")).Append(Enum.GetNames(typeof(Color)).Length).Append('\n');
        sb.Append(typeof(Item).GetFields().Length).Append(typeof(string).GetMethods().Length > 10).Append('\n');
        sb.Append(SumAsync(20).Result).Append('\n');
        var tasks = Enumerable.Range(0, 8).Select(i => Task.Run(() => Enumerable.Range(0, 1000).Sum(x => x % (i + 1)))).ToArray();
        Task.WaitAll(tasks);
        sb.Append(tasks.Sum(t => t.Result)).Append('\n');
        int counter = 0;
        Parallel.For(0, 100, i => Interlocked.Add(ref counter, i));
        sb.Append(counter).Append('\n');
        var lazy = new Lazy<string>(() => "lazy");
        var tuple = Tuple.Create(1, "two", 3.0);
        sb.Append(lazy.Value).Append(tuple.Item2).Append(Math.Round(Math.Sqrt(2), 3)).Append(Math.Pow(2, 10)).Append('\n');
        try { object o = null; o.ToString(); } catch (NullReferenceException) { sb.Append("nre\n"); }
        try { checked { int big = int.MaxValue; big++; } } catch (OverflowException e) { sb.Append(e.GetType().Name).Append('\n'); }
        var words = text.Split(' ').Where(w => w.Length > 3).Select(w => w.ToLowerInvariant()).Distinct().OrderBy(w => w, StringComparer.Ordinal);
        sb.Append(string.Concat(words)).Append('\n');
        sb.Append(More()).Append('\n');
        return sb.ToString();
    }

    static string More()
    {
        var sb = new StringBuilder();
        var cd = new ConcurrentDictionary<string, int>();
        Parallel.For(0, 50, i => cd.AddOrUpdate("k" + (i % 5), 1, (k, v) => v + 1));
        sb.Append(cd.Count).Append(cd.Values.Sum()).Append(';');
        decimal d = 0.1m;
        for (int i = 0; i < 10; i++) d = d * 1.5m + 0.25m;
        sb.Append(d.ToString("F4", CultureInfo.InvariantCulture)).Append(Math.Round(d, 2)).Append(';');
        var dt = DateTime.Parse("2021-03-04T05:06:07", CultureInfo.InvariantCulture);
        sb.Append(dt.AddDays(40).ToString("R", CultureInfo.InvariantCulture)).Append(dt.DayOfWeek).Append(dt.ToString("o", CultureInfo.InvariantCulture)).Append(';');
        foreach (var f in new[] { "G", "E3", "P1", "C", "0.00", "#,##0" }) sb.Append((1234.5678).ToString(f, CultureInfo.InvariantCulture)).Append(' ');
        var big = BigInteger.Pow(new BigInteger(3), 200) % BigInteger.Parse("1000000007");
        sb.Append(big).Append(';');
        using (var ms = new MemoryStream())
        {
            using (var w = new StreamWriter(ms, Encoding.UTF8, 1024, true)) { w.Write("line1\nline2\n"); }
            ms.Position = 0;
            using (var r = new StreamReader(ms)) sb.Append(r.ReadLine()).Append(r.ReadToEnd().Length);
        }
        var lookup = Enumerable.Range(0, 30).ToLookup(i => i % 4);
        sb.Append(lookup[2].Aggregate((a, b) => a + b)).Append(Enumerable.Range(0, 10).Zip(Enumerable.Range(5, 10), (a, b) => a * b).SkipWhile(x => x < 20).First());
        sb.Append(string.Compare("abc", "ABD", StringComparison.OrdinalIgnoreCase)).Append(char.IsLetterOrDigit('x')).Append("a,b;c".Split(new[] { ',', ';' }, StringSplitOptions.RemoveEmptyEntries).Length);
        sb.Append(Even()).Append('\n');
        sb.Append(Compiled()).Append('\n');
        return sb.ToString();
    }

    // Compiled regular expressions and expression trees run the
    // framework's own code generators: many more methods.
    static string Compiled()
    {
        var sb = new StringBuilder();
        var re = new Regex(@"^(?<user>[a-z0-9._%+-]+)@(?<host>[a-z0-9.-]+\.[a-z]{2,})$", RegexOptions.Compiled | RegexOptions.IgnoreCase);
        foreach (var addr in new[] { "a.b@example.com", "bad@", "X_Y@host.org" })
        {
            var m = re.Match(addr);
            sb.Append(m.Success ? m.Groups["host"].Value : "-").Append(',');
        }
        var x = Expression.Parameter(typeof(int), "x");
        var y = Expression.Parameter(typeof(int), "y");
        var body = Expression.Condition(Expression.GreaterThan(x, y), Expression.Multiply(x, Expression.Constant(2)), Expression.Add(y, Expression.Constant(3)));
        var f = Expression.Lambda<Func<int, int, int>>(body, x, y).Compile();
        sb.Append(f(5, 2)).Append(f(1, 9)).Append(',');
        Expression<Func<Item, bool>> pred = it => it.Price > 10 && it.Name.StartsWith("item1");
        var items = Enumerable.Range(0, 30).Select(i => new Item { Name = "item" + i, Price = i }).ToList();
        sb.Append(items.Count(pred.Compile())).Append(',');
        var mi = typeof(Workload).GetMethod("Helper", BindingFlags.NonPublic | BindingFlags.Static);
        sb.Append(mi.Invoke(null, new object[] { 20 })).Append(',');
        var made = (Item)Activator.CreateInstance(typeof(Item));
        sb.Append(made.GetType().GetFields().Select(fi => fi.Name).OrderBy(n => n, StringComparer.Ordinal).Aggregate((p, q) => p + q));
        return sb.ToString();
    }

    static int Helper(int v) { return v + 1; }

    static async Task<string> DelayedAsync(CancellationToken ct)
    {
        await Task.Delay(1, ct);
        await Task.Yield();
        return "delayed";
    }

    static string Even()
    {
        var sb = new StringBuilder();
        try { throw new InvalidOperationException("for the stack trace"); }
        catch (Exception e) { sb.Append(e.ToString().Contains("Even") ? "trace;" : "notrace;"); }
        var tl = new ThreadLocal<int>(() => 7);
        var sem = new SemaphoreSlim(2);
        var lockObj = new object();
        int shared = 0;
        var threads = Enumerable.Range(0, 4).Select(i => new Thread(() => { sem.Wait(); lock (lockObj) shared += tl.Value; sem.Release(); })).ToList();
        threads.ForEach(th => th.Start());
        threads.ForEach(th => th.Join());
        sb.Append(shared).Append(';');
        using (var cts = new CancellationTokenSource()) sb.Append(DelayedAsync(cts.Token).Result).Append(';');
        var list = Enumerable.Range(0, 50).Reverse().ToList();
        list.RemoveAll(x => x % 5 == 0);
        list.Sort();
        sb.Append(list.BinarySearch(21)).Append(list.ConvertAll(x => x.ToString()).FindAll(x => x.Length > 1).Count).Append(list.TrueForAll(x => x >= 0)).Append(';');
        var a = new[] { 1, 2, 3, 4, 5 }; var b = new[] { 4, 5, 6 };
        sb.Append(string.Join("", a.Union(b))).Append(string.Join("", a.Except(b))).Append(string.Join("", a.Intersect(b))).Append(a.Concat(b).Reverse().TakeWhile(x => x > 3).Count()).Append(a.All(x => x > 0)).Append(a.Any(x => x > 4)).Append(a.Contains(3)).Append(';');
        sb.Append(a.Select(x => (long)x).Sum()).Append(a.Select(x => (double)x).Average()).Append(a.Select(x => (decimal)x).Max()).Append(a.Min()).Append(a.Skip(1).Take(2).Last()).Append(a.ElementAt(2)).Append(a.DefaultIfEmpty().First()).Append(';');
        var byLen = new Dictionary<string, int>(StringComparer.OrdinalIgnoreCase) { { "A", 1 } };
        sb.Append(byLen.ContainsKey("a")).Append(Array.ConvertAll(a, x => x * 2).Sum()).Append(Array.IndexOf(a, 3)).Append(Array.Find(a, x => x > 3)).Append(';');
        sb.AppendFormat(CultureInfo.InvariantCulture, "{0:D5}-{1:0.###}-{2:X}-{3,-6}|", 42, Math.PI, 255L, "x");
        sb.Append(char.ToUpperInvariant('q')).Append("MiXeD".ToLower()).Append(" trim ".Trim()).Append("abc".IndexOf('c')).Append("a-b-c".LastIndexOf('-')).Append("abc".StartsWith("ab", StringComparison.Ordinal)).Append("x".PadRight(3, '_')).Append(';');
        sb.Append(Encoding.Unicode.GetByteCount("abc")).Append(Encoding.ASCII.GetString(new byte[] { 65, 66 })).Append(Convert.FromBase64String("QUJD").Length).Append(Convert.ToInt32("ff", 16)).Append(Convert.ToString(10, 2)).Append(';');
        sb.Append(Path.Combine("a", "b", "c.txt")).Append(Path.GetExtension("x.tar.gz")).Append(Path.GetFileNameWithoutExtension("/p/q.r")).Append(';');
        sb.Append(TimeSpan.Parse("01:02:03", CultureInfo.InvariantCulture).TotalSeconds).Append(DateTimeOffset.FromUnixTimeSeconds(1000000000).Year).Append(';');
        sb.Append(Nullable.Compare<int>(1, null)).Append(new KeyValuePair<int, string>(1, "kv").Value).Append(EqualityComparer<string>.Default.Equals("a", "a")).Append(Comparer<int>.Default.Compare(1, 2));
        return sb.ToString();
    }
}
