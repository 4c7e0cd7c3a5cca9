using System;

static class Program
{
	static int probes;

	static void Probe()
	{
		probes++;
		Console.WriteLine("probe " + probes);
	}

	// Wrapped by deliverprof with an integration whose Begin and End throw.
	static int Thrower(int x) { return x * 2; }

	static int Main()
	{
		Console.WriteLine("app: sees Lib " + Lib.Version());
		for (int i = 0; i < 3; i++)
			Probe();
		Console.WriteLine("thrower " + Thrower(1) + " " + Thrower(2));
		Console.WriteLine("app: sees Lib " + Lib.Version() + " after the helper ran");
		return 0;
	}
}
