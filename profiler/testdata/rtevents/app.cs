// The app of TestRuntimeEvents: garbage collections of each generation,
// exceptions thrown and caught, a contended lock, and enough allocation for
// allocation ticks; then an EventSource created at the end writes one
// event, with the filter argument "mode" it was enabled with.
using System;
using System.Collections.Generic;
using System.Diagnostics.Tracing;
using System.Threading;

[EventSource(Name = "Clrprof-Late-Source")]
class LateSource : EventSource {
    public LateSource() : base(EventSourceSettings.EtwSelfDescribingEventFormat) {}
    public string Mode;
    protected override void OnEventCommand(EventCommandEventArgs command) {
        if (command.Arguments != null && command.Arguments.ContainsKey("mode")) Mode = command.Arguments["mode"];
    }
    [Event(1)]
    public void Late(int n, string mode) { WriteEvent(1, n, mode); }
}

static class RuntimeEventsApp {
    static readonly object Gate = new object();
    static object[] keep = new object[1000];

    static void Thrower(int i) {
        throw new InvalidOperationException("boom " + i);
    }

    static readonly ManualResetEvent held = new ManualResetEvent(false);
    static volatile bool trying;

    // Holder takes the lock and keeps it until Waiter is about to take it,
    // then 50 ms more: every round contends once, whenever the threads get
    // to run (two threads merely started together did not always meet: on
    // a loaded machine one round in five once had no contention).
    static void Holder() {
        lock (Gate) {
            held.Set();
            while (!trying) {
                Thread.Sleep(1);
            }
            Thread.Sleep(50);
        }
    }

    static void Waiter() {
        held.WaitOne();
        trying = true;
        lock (Gate) {
        }
    }

    static int Main() {
        for (int i = 0; i < 5; i++) {
            try { Thrower(i); } catch (InvalidOperationException) {}
        }
        // The induced collections come before the allocations below: those
        // (25 MB) can outgrow the generation 0 budget, which the runtime
        // sizes from the processor's cache, and a collection of their own
        // then turned the GC.Collect(0) after them into a generation 1
        // collection (on a machine whose sysfs reports a 32 MB L3).
        GC.Collect(0);
        GC.Collect(1);
        GC.Collect(2);
        // sbyte[], which nothing else in the process allocates: an
        // allocation tick names the object whose allocation crossed the
        // tick's threshold, and a byte[] of the libraries' own (184
        // elements, once on .NET 10) was taken for one of these.
        for (int i = 0; i < 200000; i++) {
            keep[i % keep.Length] = new sbyte[100];
        }
        for (int round = 0; round < 5; round++) {
            held.Reset();
            trying = false;
            var a = new Thread(Holder);
            var b = new Thread(Waiter);
            a.Start(); b.Start();
            a.Join(); b.Join();
        }
        var late = new LateSource();
        late.Late(42, late.Mode ?? "(no filter arguments)");
        Console.WriteLine("app done");
        return 100;
    }
}
