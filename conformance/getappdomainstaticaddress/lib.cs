// The library the getappdomainstaticaddress app loads into a collectible
// context: classes with static fields, one generic.
namespace ConfUnloadLib {
    public class TestClass {
        static int counter = 41;
        static string label = "collectible";
        public static object Shared;

        public TestClass() {
            counter++;
            Shared = new Holder<string>(label);
        }

        public override int GetHashCode() { return counter; }
    }

    public class Holder<T> {
        static int instances;
        public T Value;
        public Holder(T v) { Value = v; instances++; }
    }
}
