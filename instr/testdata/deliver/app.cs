using System;

static class Program
{
	static int probes;

	static void Probe()
	{
		probes++;
		Console.WriteLine("probe " + probes);
	}

	static int Main()
	{
		Console.WriteLine("app: sees Lib " + Lib.Version());
		for (int i = 0; i < 3; i++)
			Probe();
		Console.WriteLine("app: sees Lib " + Lib.Version() + " after the helper ran");
		return 0;
	}
}
