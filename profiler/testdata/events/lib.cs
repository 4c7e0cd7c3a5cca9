// The library the events app loads on demand: one assembly, one module,
// three classes the app instantiates.
namespace EvLib
{
    public class Loaded1 { public int V = 1; }
    public class Loaded2 { public int V = 2; }
    public class Loaded3 { public int V = 3; }
}
