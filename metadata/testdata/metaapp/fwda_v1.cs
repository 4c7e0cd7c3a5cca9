// fwda.dll as the app was compiled against: it defines Fwd.Moved itself.
namespace Fwd {
	public class Moved {
		public string Hello() { return "v1"; }
	}
}
