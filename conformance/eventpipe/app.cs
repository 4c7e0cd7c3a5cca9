// The app of the eventpipe scenario: it calls TriggerMethod once; the
// profiler writes its events when the runtime compiles that method.
using System;
using System.Runtime.CompilerServices;

static class EventPipeApp {
    [MethodImpl(MethodImplOptions.NoInlining)]
    static int TriggerMethod(int x) {
        return x + 1;
    }

    static int Main() {
        Console.WriteLine("TriggerMethod returned {0}", TriggerMethod(41));
        Console.WriteLine("app done");
        return 100;
    }
}
