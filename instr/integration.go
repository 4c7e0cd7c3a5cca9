//go:build cgo

package instr

import "github.com/clrprof/clrprof/metadata"

// Integration names the managed code a wrap calls: two static methods of a
// type in a helper assembly, with the shapes
//
//	public static object Begin(int id, object instance, object[] args)
//	public static void   End(int id, object state, object returnValue, object exception)
//
// (see the package documentation for what each argument holds).
type Integration struct {
	// Assembly is the helper assembly: the wrapped code references it by
	// this name (an AssemblyRef), so the runtime must be able to resolve
	// it when the code first runs.
	Assembly metadata.AssemblyName
	// Type is the namespace-qualified name of the type holding Begin and
	// End (a top-level type).
	Type string
	// Begin and End are the method names ("Begin" and "End" when empty).
	Begin, End string
	// Args makes Begin receive the method's arguments, boxed, in a new
	// object[] at every call; without it args is null (and nothing is
	// allocated).
	Args bool
}

// ErrorSink is a static method void Name(int id, object exception) in a
// helper assembly that receives the exceptions an integration threw.
type ErrorSink struct {
	Assembly metadata.AssemblyName
	Type     string // namespace-qualified
	Method   string
}
