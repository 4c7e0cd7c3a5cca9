// The library the classload app loads into a collectible context: one
// class that keeps its instances in a static List of itself.
using System;
using System.Collections.Generic;

namespace ConfClassLib {
    public class TestClass {
        static List<TestClass> instances = new List<TestClass>();
        string[] labels = new string[10];

        public TestClass() {
            for (int i = 0; i < labels.Length; i++) {
                labels[i] = "label " + i;
            }
            instances.Add(this);
            Console.WriteLine("TestClass constructed");
        }
    }
}
