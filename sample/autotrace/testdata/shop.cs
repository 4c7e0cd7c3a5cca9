using System;

namespace Shop
{
	public class Orders
	{
		int items;

		public Orders(int items) { this.items = items; }

		public int Total()
		{
			int s = 0;
			for (int i = 0; i < items; i++)
				s += Price(i);
			return s;
		}

		public static int Price(int i) { return i * 3 + 1; }

		public void Fail() { throw new InvalidOperationException("out of stock"); }

		public static T Echo<T>(T x) { return x; }
	}
}

static class Program
{
	static int Main()
	{
		var o = new Shop.Orders(5);
		Console.WriteLine("total " + o.Total());
		for (int i = 0; i < 2; i++) {
			try {
				o.Fail();
			} catch (InvalidOperationException e) {
				Console.WriteLine("caught " + e.Message);
			}
		}
		Console.WriteLine("echo " + Shop.Orders.Echo(42) + " " + Shop.Orders.Echo("x"));
		// Four threads calling a traced method at once.
		int sum = 0;
		var threads = new System.Threading.Thread[4];
		for (int k = 0; k < threads.Length; k++) {
			threads[k] = new System.Threading.Thread(() => {
				int s = 0;
				for (int j = 0; j < 500; j++)
					s += Shop.Orders.Price(j);
				System.Threading.Interlocked.Add(ref sum, s);
			});
			threads[k].Start();
		}
		foreach (var th in threads)
			th.Join();
		Console.WriteLine("threads " + sum);
		return 0;
	}
}
