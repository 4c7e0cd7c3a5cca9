// The library the classload scenario loads into a collectible context:
// one class whose instances register themselves in a static List of their
// own type, so that loading it loads List<TestClass> and its generic
// interfaces too.
using System;
using System.Collections.Generic;

namespace UnloadLibrary {
    public class TestClass : MarshalByRefObject {
        static readonly string prefix = "instance string ";
        static int count;
        static List<TestClass> all = new List<TestClass>();
        string[] strings;

        public TestClass() {
            strings = new string[100];
            for (int i = 0; i < strings.Length; i++) {
                strings[i] = prefix + (++count);
            }
            all.Add(this);
            Console.WriteLine("TestClass constructed");
        }
    }
}
