// Package soak compiles a large generated C# program with Mono's C#
// compiler running on .NET 8, with and without each sample profiler.
package soak
