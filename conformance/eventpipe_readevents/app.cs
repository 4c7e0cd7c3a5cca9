// The app of the eventpipe_readevents scenario: a self-describing
// EventSource writes three events (an Int32; a Char, an Int32 array and a
// String; two Strings and a list of key/value pairs) that the profiler
// reads through its own EventPipe session.
using System;
using System.Collections.Generic;
using System.Diagnostics.Tracing;

[EventSource(Name = "EventPipeTestEventSource")]
class TestEventSource : EventSource {
    public TestEventSource() : base(EventSourceSettings.EtwSelfDescribingEventFormat) {}

    [Event(1)]
    public void MyEvent(int i) { WriteEvent(1, i); }

    [Event(2)]
    public void MyArrayEvent(char ch, int[] intArray, string str) { WriteEvent(2, ch, intArray, str); }

    [Event(3)]
    public void KeyValueEvent(string SourceName, string EventName, IEnumerable<KeyValuePair<string, string>> Arguments) {
        WriteEvent(3, SourceName, EventName, Arguments);
    }
}

static class ReadEventsApp {
    static int Main() {
        Console.WriteLine("writing events to EventPipeTestEventSource");
        var source = new TestEventSource();
        source.MyEvent(12);
        var ints = new int[120];
        for (int i = 0; i < ints.Length; i++) ints[i] = i;
        source.MyArrayEvent('d', ints, "Hello from EventPipeTestEventSource!");
        var list = new List<KeyValuePair<string, string>>();
        list.Add(new KeyValuePair<string, string>("samplekey", "samplevalue"));
        source.KeyValueEvent("Source", "Event", list);
        Console.WriteLine("app done");
        return 100;
    }
}
