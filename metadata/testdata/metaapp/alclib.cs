// alclib.dll: loaded into a collectible AssemblyLoadContext and unloaded.
namespace AlcLib {
	public class Box<T> {
		public T Value;
		public Box(T v) { Value = v; }
		public T Get() { return Value; }
	}
	public static class Thing {
		public static int Run() {
			var b = new Box<int>(41);
			var s = new Box<string>("x");
			return b.Get() + s.Get().Length;
		}
	}
}
