// Package ilrw reads, edits and writes IL method bodies, and installs
// rewritten bodies in a running CoreCLR: at a method's first JIT
// compilation or later through ReJIT.
//
// [Decode] parses a body as GetILFunctionBody returns it and [Body.Encode]
// writes it back (an unchanged body byte for byte); branches and exception
// clauses point at instructions, so edits ([Body.InsertAt],
// [Body.Replace], ...) keep them attached and Encode recomputes offsets
// and widens branches. [Body.InsertAtEntry], [Body.WrapExit] and
// [Body.ReplaceCalls] are the common rewrites (Example,
// ExampleBody_WrapExit). A [Rewriter] runs a [RewriteFunc] over methods
// and installs the result from JITCompilationStarted or through ReJIT
// (ExampleRewriter). Decoders never panic: malformed input gives a
// [*FormatError] with the offset.
//
// Read more in docs/packages.md of the repository.
package ilrw
