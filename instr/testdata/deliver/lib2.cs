using System.Reflection;
[assembly: AssemblyVersion("2.0.0.0")]
public static class Lib { public static string Version() { return "2"; } public static string OnlyInTwo() { return "two"; } }
