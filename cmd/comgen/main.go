// Command comgen generates clrprof's COM bindings (packages profiler and
// metadata) from the runtime's interface definitions, and package ilrw's
// opcode table from opcode.def.
//
// Usage:
//
//	comgen [-idl DIR] [-w] [-stats] [-root DIR]
//	comgen fetch [-cache DIR]
//
// Without -w it prints which generated files differ from what is on disk and
// exits 1 if any do; with -w it writes them. The input directory is -idl, else
// $CLRPROF_IDL, else the cache that `comgen fetch` fills with the files pinned
// in idl/manifest.txt (downloaded and checked against their sha256).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/clrprof/clrprof/gen"
	"github.com/clrprof/clrprof/internal/fetch"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) > 0 && args[0] == "fetch" {
		return runFetch(args[1:])
	}
	fs := flag.NewFlagSet("comgen", flag.ContinueOnError)
	dir := fs.String("idl", "", "directory holding corprof.idl, cor.h, corhdr.h, corerror.h and opcode.def (default $CLRPROF_IDL, then the fetch cache)")
	write := fs.Bool("w", false, "write the generated files instead of reporting differences")
	stats := fs.Bool("stats", false, "print how many interfaces, methods, enums and constants were read and emitted")
	root := fs.String("root", ".", "module root to write into or compare with")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	in := *dir
	if in == "" {
		in = os.Getenv("CLRPROF_IDL")
	}
	if in == "" {
		c, err := fetch.CacheDir("current")
		if err != nil {
			fmt.Fprintln(os.Stderr, "comgen:", err)
			return 1
		}
		in = c
	}
	inputs, err := gen.ReadInputs(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "comgen:", err)
		if os.IsNotExist(err) {
			fmt.Fprintln(os.Stderr, "comgen: set -idl or $CLRPROF_IDL, or run `comgen fetch`")
		}
		return 1
	}
	// The recorded command line omits -idl and -root so that the output does
	// not depend on where the inputs live.
	out, err := gen.Generate(inputs, "comgen -w")
	if err != nil {
		fmt.Fprintln(os.Stderr, "comgen:", err)
		return 1
	}
	if *stats {
		fmt.Println(out.Stats)
	}
	if *write {
		if err := out.Write(*root); err != nil {
			fmt.Fprintln(os.Stderr, "comgen:", err)
			return 1
		}
		return 0
	}
	diffs, err := out.Diff(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "comgen:", err)
		return 1
	}
	for _, d := range diffs {
		fmt.Println("differs:", d)
	}
	if len(diffs) > 0 {
		return 1
	}
	return 0
}

func runFetch(args []string) int {
	fs := flag.NewFlagSet("comgen fetch", flag.ContinueOnError)
	set := fs.String("set", "current", "input set of idl/manifest.txt to fetch (current or v3.1)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	dir, err := fetch.Fetch(*set)
	if err != nil {
		fmt.Fprintln(os.Stderr, "comgen fetch:", err)
		return 1
	}
	fmt.Println(dir)
	return 0
}
