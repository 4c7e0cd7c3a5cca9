// Command strprof is the profiler of TestReadString: it hooks StrApp.Take
// with the WithInfo ELT hooks and prints, for each call, what ReadString
// says about its first argument (a string), its second (not always one),
// and about values that are no object at all.
package main

import (
	"fmt"
	"os"

	"github.com/clrprof/clrprof/elt"
	"github.com/clrprof/clrprof/profiler"
)

type strprof struct {
	profiler.Base
	info *profiler.Info
}

func (p *strprof) Initialize(info *profiler.Info) error {
	p.info = info
	return elt.EnableWithInfo(info, elt.CallOptions{
		Args: true,
		Filter: func(f profiler.FunctionID) bool {
			n, err := info.FunctionName(f)
			return err == nil && n == "StrApp.Take"
		},
		Call: p.call,
	})
}

func (p *strprof) call(c *elt.Call) {
	if c.Kind != elt.Enter {
		return
	}
	args, err := c.Args()
	if err != nil || len(args) != 2 {
		fmt.Fprintf(os.Stderr, "strprof: args: %d %v\n", len(args), err)
		return
	}
	s0, err0 := read(p.info, args[0])
	fmt.Fprintf(os.Stderr, "strprof: arg0 %q err=%v\n", s0, err0)
	s1, err1 := read(p.info, args[1])
	fmt.Fprintf(os.Stderr, "strprof: arg1 %q err=%v\n", s1, err1)
	for _, bogus := range []profiler.ObjectID{0, 8, 0x1000, 0x7ffffffff000, profiler.ObjectID(args[0].Addr)} {
		_, err := p.info.ReadString(bogus)
		fmt.Fprintf(os.Stderr, "strprof: bogus failed=%v\n", err != nil)
	}
}

func read(info *profiler.Info, a elt.Arg) (string, error) {
	if len(a.Data) != 8 {
		return "", fmt.Errorf("not a reference (%d bytes)", len(a.Data))
	}
	obj, err := a.Object()
	if err != nil {
		return "", err
	}
	return info.ReadString(obj)
}

func (p *strprof) Shutdown() error {
	elt.DisableWithInfo()
	return nil
}

func init() {
	profiler.Register("{6A2D9C41-0E7B-4F35-9B18-2C5E7A3D1F04}", &strprof{})
}

func main() {}
