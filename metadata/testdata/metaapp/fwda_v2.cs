// fwda.dll as the app runs with: Fwd.Moved is forwarded to fwdb.dll.
[assembly: System.Runtime.CompilerServices.TypeForwardedTo(typeof(Fwd.Moved))]
