// fwdb.dll: where Fwd.Moved really lives.
namespace Fwd {
	public class Moved {
		public string Hello() { return "moved"; }
	}
}
