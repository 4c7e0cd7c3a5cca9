// Package metadata reads and writes the ECMA-335 metadata of loaded modules
// through the runtime's IMetaDataImport/Emit interfaces: tokens, their
// properties and signatures.
//
// A profiler gets an [Import2] for a module from profiler.Info.ModuleImport
// (once the module has loaded) and reads whole enumerations as slices and
// properties as structs (TypeDefs, Methods, TypeDef, Method, ...); [Emit2]
// defines references and new metadata; [DispenserEx.OpenImport] opens any
// assembly file. [ParseMethodSig] and its siblings decode signature blobs
// into [Type] trees that encode back byte for byte, and never panic on
// malformed input ([*SigError]); see ExampleParseMethodSig.
// [Import2.MethodName] and [Import2.FormatType] format names
// ("Namespace.Outer<T>+Nested<U>.Method<V>(T, U, V, string[])").
//
// Read more in docs/packages.md of the repository.
package metadata
