using System.Reflection;
[assembly: AssemblyVersion("1.0.0.0")]
public static class Lib { public static string Version() { return "1"; } }
