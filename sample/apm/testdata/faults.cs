// The app of sample/apm's TestHelperFaults: N activities of its own
// source, every fifth carrying a tag value whose ToString throws, which
// the helper meets when it encodes the span. The application must not see
// that exception, and every other activity must become a span.
using System;
using System.Diagnostics;

class Refuses
{
	public override string ToString() => throw new InvalidOperationException("this tag value refuses to be a string");
}

static class Program
{
	static int Main(string[] args)
	{
		int n = int.Parse(args[0]);
		var source = new ActivitySource("Clrprof.Test.Faults");
		int listened = 0;
		for (int i = 0; i < n; i++) {
			using (Activity a = source.StartActivity("op " + i, ActivityKind.Internal)) {
				if (a == null)
					continue;
				listened++;
				a.SetTag("op.index", i);
				if (i % 5 == 4)
					a.SetTag("op.refuses", new Refuses());
			}
		}
		Console.WriteLine("faults: done ops=" + n + " listened=" + listened);
		return 0;
	}
}
