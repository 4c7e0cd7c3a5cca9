// Package idmap keeps the runtime's module, class and function IDs a
// profiler has seen, with the module and metadata token each stands for,
// and forgets them when the runtime unloads what they name.
//
// An ID is only valid while its module (and, for generic code, the
// modules of its type arguments) is loaded: the runtime reuses the
// address, and handing a stale ID back to it can crash the application.
// A [Map], made with [New] in Initialize, is fed from the profiler's
// callbacks of the same names (ModuleLoadFinished, ClassLoadFinished,
// JITCompilationStarted and the unload callbacks); its lookups return only
// IDs that are still loaded, reverse lookups go from (module, token) to
// IDs, and [Map.UseClass], [Map.UseFunction] and [Map.UseModule] keep an
// ID from unloading while it is in use outside a callback about it. A
// lookup of an unknown or dropped ID finds nothing; a Use of it, or
// [Map.ClassFromToken], fails with [ErrUnknownID].
package idmap
