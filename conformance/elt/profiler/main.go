// Command profiler is the profiler of the eltenter and eltleave scenarios
// (upstream's slow-path ELT profiler): it installs the WithInfo
// enter/leave/tailcall hooks with arguments, return values and frame info,
// hooks the methods of the app's SlowPathApp class only, and checks that
// each one is entered and left once and, as ELT_CHECK says ("enter" or
// "leave"), that every argument range, or the return value range, holds
// exactly the values the app passed or returned (primitives, a string, and
// structs field by field).
package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"sync"

	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/elt"
	"github.com/clrprof/clrprof/profiler"
)

// A st is the expected value of a sequential struct: its fields in order
// (int32, float32 or float64), laid out with natural alignment.
type st []any

// A call is what one method must be entered with and return.
type call struct {
	args []any
	ret  any
}

var (
	f32x2 = st{float32(1.2), float32(3.5)}
	f32x3 = st{float32(6.7), float32(10.11), float32(13.14)}
	f32x4 = st{float32(15.17), float32(19.21), float32(22.23), float32(26.29)}
	f64x2 = st{1.2, 3.5}
	f64x3 = st{6.7, 10.11, 13.14}
	f64x4 = st{15.17, 19.21, 22.23, 26.29}
)

var calls = map[string]call{
	"SimpleArgsFunc":    {[]any{int32(-123), float32(-4.3), "Hello, test!"}, "Hello from SimpleArgsFunc!"},
	"MixedStructFunc":   {[]any{st{int32(1), 1.0}}, st{int32(4), 1.0}},
	"LargeStructFunc":   {[]any{st{int32(0), 0.0, int32(1), 1.0, int32(2), 2.0, int32(3), 3.0}}, int32(3)},
	"IntegerStructFunc": {[]any{st{int32(14), int32(256)}}, st{int32(21), int32(256)}},

	"Fp32x2StructFunc":                         {[]any{f32x2}, st{float32(1.2), float32(2)}},
	"Fp32x2StructFp32x3StructFunc":             {[]any{f32x2, f32x3}, f32x3},
	"Fp32x3StructFunc":                         {[]any{f32x3}, st{float32(6.7), float32(10.11), float32(3)}},
	"Fp32x3StructFp32x2StructFunc":             {[]any{f32x3, f32x2}, f32x2},
	"Fp32x3StructSingleFp32x3StructSingleFunc": {[]any{f32x3, float32(1.2), f32x3, float32(3.5)}, f32x3},
	"Fp32x4StructFunc":                         {[]any{f32x4}, st{float32(15.17), float32(19.21), float32(22.23), float32(4)}},
	"Fp32x4StructFp32x4StructFunc":             {[]any{f32x4, f32x4}, f32x4},

	"Fp64x2StructFunc":                         {[]any{f64x2}, st{1.2, 2.0}},
	"Fp64x2StructFp64x3StructFunc":             {[]any{f64x2, f64x3}, f64x3},
	"Fp64x3StructFunc":                         {[]any{f64x3}, st{6.7, 10.11, 3.0}},
	"Fp64x3StructFp64x2StructFunc":             {[]any{f64x3, f64x2}, f64x2},
	"Fp64x3StructDoubleFp64x3StructDoubleFunc": {[]any{f64x3, 1.2, f64x3, 3.5}, f64x3},
	"Fp64x4StructFunc":                         {[]any{f64x4}, st{15.17, 19.21, 22.23, 4.0}},
	"Fp64x4StructFp64x4StructFunc":             {[]any{f64x4, f64x4}, f64x4},

	"DoubleRetFunc": {nil, 13.0},
}

type eltProf struct {
	profiler.Base
	info *profiler.Info

	enter, leave bool // what ELT_CHECK asks to check

	mu             sync.Mutex
	enters, leaves map[string]int
}

func (p *eltProf) Initialize(info *profiler.Info) error {
	p.info = info
	p.enters, p.leaves = map[string]int{}, map[string]int{}
	switch c := os.Getenv("ELT_CHECK"); c {
	case "enter":
		p.enter = true
	case "leave":
		p.leave = true
	default:
		check.Failf("ELT_CHECK is %q, want enter or leave", c)
	}
	err := elt.EnableWithInfo(info, elt.CallOptions{
		Call:   p.hook,
		Filter: p.wanted,
		Args:   true, Return: true, Frame: true,
	})
	if err != nil {
		check.Failf("elt.EnableWithInfo: %v", err)
	}
	return err
}

// wanted hooks the methods of the app's SlowPathApp class.
func (p *eltProf) wanted(f profiler.FunctionID) bool {
	parts, err := p.info.FunctionNameParts(f)
	return err == nil && parts.Class == "SlowPathApp"
}

func (p *eltProf) hook(c *elt.Call) {
	parts, err := p.info.FunctionNameParts(c.Function)
	if err != nil {
		check.Failf("%v hook: FunctionNameParts(%#x): %v", c.Kind, c.Function, err)
		return
	}
	name := parts.Method
	if _, err := c.Frame(); err != nil {
		check.Failf("%s: %v hook: frame info: %v", name, c.Kind, err)
	}
	want, known := calls[name]
	switch c.Kind {
	case elt.Enter:
		p.count(p.enters, name)
		if !known || !p.enter {
			return
		}
		args, err := c.Args()
		if err != nil {
			check.Failf("%s: arguments: %v", name, err)
			return
		}
		if len(args) != len(want.args) {
			check.Failf("%s: %d argument ranges, want %d", name, len(args), len(want.args))
			return
		}
		for i, a := range args {
			if err := p.match(a, want.args[i]); err != nil {
				check.Failf("%s: argument %d: %v", name, i, err)
			}
		}
	case elt.Leave:
		p.count(p.leaves, name)
		if !known || !p.leave {
			return
		}
		r, err := c.Return()
		if err != nil {
			check.Failf("%s: return value: %v", name, err)
			return
		}
		if err := p.match(r, want.ret); err != nil {
			check.Failf("%s: return value: %v", name, err)
		}
	case elt.Tailcall:
		// The app makes no tail calls worth checking; the frame was read above.
	}
}

func (p *eltProf) count(m map[string]int, name string) {
	p.mu.Lock()
	m[name]++
	p.mu.Unlock()
}

// match compares one argument or return value range with its expected value.
func (p *eltProf) match(a elt.Arg, want any) error {
	switch w := want.(type) {
	case string:
		obj, err := a.Object()
		if err != nil {
			return err
		}
		s, err := p.info.ReadString(obj)
		if err != nil {
			return err
		}
		if s != w {
			return fmt.Errorf("string %q, want %q", s, w)
		}
		return nil
	case st:
		off, size := layout(w)
		if len(a.Data) != size {
			return fmt.Errorf("struct range of %d bytes, want %d (% x)", len(a.Data), size, a.Data)
		}
		for i, f := range w {
			if got := field(a.Data[off[i]:], f); got != f {
				return fmt.Errorf("field %d is %v, want %v (bytes % x)", i, got, f, a.Data)
			}
		}
		return nil
	default:
		if n := sizeOf(w); len(a.Data) != n {
			return fmt.Errorf("range of %d bytes, want %d", len(a.Data), n)
		}
		if got := field(a.Data, w); got != w {
			return fmt.Errorf("%v, want %v", got, w)
		}
		return nil
	}
}

func sizeOf(v any) int {
	switch v.(type) {
	case int32, float32:
		return 4
	default:
		return 8
	}
}

// field decodes a value of want's type at the start of b.
func field(b []byte, want any) any {
	switch want.(type) {
	case int32:
		return int32(binary.LittleEndian.Uint32(b))
	case float32:
		return math.Float32frombits(binary.LittleEndian.Uint32(b))
	case float64:
		return math.Float64frombits(binary.LittleEndian.Uint64(b))
	}
	panic(fmt.Sprintf("no decoder for %T", want))
}

// layout gives the offsets of a sequential struct's fields and its size.
func layout(s st) (off []int, size int) {
	align := 1
	for _, f := range s {
		n := sizeOf(f)
		size = (size + n - 1) / n * n
		off = append(off, size)
		size += n
		align = max(align, n)
	}
	return off, (size + align - 1) / align * align
}

func (p *eltProf) Shutdown() error {
	elt.DisableWithInfo()
	p.mu.Lock()
	defer p.mu.Unlock()
	var final []string
	for name := range calls {
		if p.enters[name] != 1 || p.leaves[name] != 1 {
			final = append(final, fmt.Sprintf("%s: entered %d times and left %d times, want once each", name, p.enters[name], p.leaves[name]))
		}
	}
	check.Done(final...)
	return nil
}

func init() {
	profiler.Register("{3F1C2E7A-9B54-4D08-A6E3-7C21B0D9E403}", &eltProf{})
}

func main() {}
