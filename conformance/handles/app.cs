// The app of the handles scenario: a worker thread allocates one instance
// of each of three test classes (the profiler makes a weak, a strong and a
// pinned handle for them as they are allocated), drops every reference to
// them, allocates a few strings after them (which a compacting collection
// would slide over the dead instances), then induces three full
// collections.
using System;
using System.Runtime.CompilerServices;
using System.Threading;

namespace HandlesApp {
    class TestClassForWeakHandle {
        public static int Id;
        public string Tag;
        public TestClassForWeakHandle(string tag) { Tag = Id + "-" + tag; }
    }

    class TestClassForStrongHandle {
        public static int Id;
        public string Tag;
        public TestClassForStrongHandle(string tag) { Tag = Id + "-" + tag; }
    }

    class TestClassForPinnedHandle {
        public static int Id;
        public string Tag;
        public TestClassForPinnedHandle(string tag) { Tag = Id + "-" + tag; }
    }

    class Objects {
        public TestClassForWeakHandle Weak;
        public TestClassForStrongHandle Strong;
        public TestClassForPinnedHandle Pinned;
        public string AfterWeak, AfterStrong, AfterPinned;
    }

    static class Program {
        [MethodImpl(MethodImplOptions.NoInlining)]
        static void AllocateAndDrop(Objects o) {
            o.Weak = new TestClassForWeakHandle("W");
            o.Strong = new TestClassForStrongHandle("S");
            o.Pinned = new TestClassForPinnedHandle("P");
            o.AfterWeak = "after weak-" + Environment.TickCount;
            o.AfterStrong = "after strong-" + Environment.TickCount;
            o.AfterPinned = "after pinned-" + Environment.TickCount;
            Console.WriteLine("tags {0} {1} {2}", o.Weak.Tag, o.Strong.Tag, o.Pinned.Tag);
            o.Weak = null;
            o.Strong = null;
            o.Pinned = null;
        }

        static void Work(object state) {
            AllocateAndDrop((Objects)state);
            for (int i = 1; i <= 3; i++) {
                Console.WriteLine("collection {0}", i);
                GC.Collect(2);
            }
        }

        static int Main() {
            // Load the types before their first instance.
            TestClassForWeakHandle.Id = 1;
            TestClassForStrongHandle.Id = 2;
            TestClassForPinnedHandle.Id = 3;
            var t = new Thread(Work);
            t.Name = "worker";
            t.Start(new Objects());
            t.Join();
            Console.WriteLine("app done");
            return 100;
        }
    }
}
