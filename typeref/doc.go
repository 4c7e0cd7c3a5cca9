// Package typeref resolves a TypeRef token (a reference from one module
// to a type defined elsewhere) to the loaded module and TypeDef that
// define the type, which the runtime's metadata does not do for profilers
// (IMetaDataImport::ResolveTypeRef is not implemented there).
//
// A [Resolver], made with [New] from the profiler's Info, looks the type up
// in the modules of the referenced assembly that the runtime has loaded
// (best match of name, public key token and version first), follows type
// forwarders and resolves nested types through their enclosing type.
// [Resolver.Resolve] returns a [Location]; a type no loaded module defines
// gives an error matching [ErrUnresolved]. A resolver caches what it reads
// about modules: call [Resolver.Forget] from ModuleUnloadStarted.
package typeref
