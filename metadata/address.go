package metadata

import "fmt"

// Address is an address in the profiled process: an instruction pointer, the
// start of a method's native code, a module's base address, a field's
// storage, or memory the runtime allocated. It is a number, not a Go
// pointer: the garbage collector does not track it, and Go code reads
// through it only with the SDK's helpers (for example
// profiler.Info.ReadMemory-style calls where offered).
type Address uintptr

// String formats the address in hexadecimal.
func (a Address) String() string { return fmt.Sprintf("%#x", uintptr(a)) }

// Format makes the integer verbs (%x, %X, %d, %o, %b, with their flags)
// format the number, as for any integer; %v and %s give String.
func (a Address) Format(f fmt.State, verb rune) {
	switch verb {
	case 'x', 'X', 'd', 'o', 'O', 'b', 'c', 'U':
		fmt.Fprintf(f, fmt.FormatString(f, verb), uintptr(a))
	default:
		fmt.Fprint(f, a.String())
	}
}
