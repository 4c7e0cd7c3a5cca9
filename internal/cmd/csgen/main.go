// Command csgen compiles C# sources with mcs into a library and records
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
	flag.Var(&args, "arg", "an extra mcs argument (repeatable)")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: csgen -out X.dll [-r ref]... [-arg mcsarg]... sources.cs...")
		os.Exit(2)
	}
	all := append([]string{}, args...)
	for _, r := range refs {
		all = append(all, "-r:"+r)
	}
	if err := csgen.Compile(*out, all, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "csgen:", err)
		os.Exit(1)
	}
}
