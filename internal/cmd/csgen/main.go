// Command csgen compiles C# sources with mcs (or, with -roslyn TFM, Roslyn's
// csc against that framework's reference assemblies) into a library and records
// the sources' hash beside it (see package internal/csgen). Used from
// generate directives such as:
//
//	//go:generate go run github.com/clrprof/clrprof/internal/cmd/csgen -out X.dll [-r ref.dll]... a.cs b.cs
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/clrprof/clrprof/internal/csgen"
)

type list []string

func (l *list) String() string     { return fmt.Sprint(*l) }
func (l *list) Set(s string) error { *l = append(*l, s); return nil }

func main() {
	out := flag.String("out", "", "the assembly to write")
	var refs, args list
	flag.Var(&refs, "r", "an assembly reference (repeatable)")
	flag.Var(&args, "arg", "an extra compiler argument (repeatable)")
	roslyn := flag.String("roslyn", "", "compile with Roslyn's csc against this target framework's reference assemblies (e.g. net10.0) instead of mcs")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: csgen -out X.dll [-r ref]... [-arg mcsarg]... sources.cs...")
		os.Exit(2)
	}
	all := append([]string{}, args...)
	for _, r := range refs {
		all = append(all, "-r:"+r)
	}
	compile := csgen.Compile
	if *roslyn != "" {
		compile = func(out string, args, sources []string) error {
			return csgen.CompileRoslyn(out, *roslyn, args, sources)
		}
	}
	if err := compile(*out, all, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "csgen:", err)
		os.Exit(1)
	}
}
