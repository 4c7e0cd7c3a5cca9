// Package enumfmt formats generated enum values as their Go names; it exists
// for generated code only.
package enumfmt

import (
	"math/bits"
	"strconv"
	"strings"
)

// Name pairs a value with its Go name.
type Name struct {
	V uint64
	N string
}

// Format returns the name of v; for flag sets, the names of its single-bit
// flags joined by "|", with any unnamed bits in hex; otherwise typ(value).
func Format(v uint64, names []Name, flags bool, typ string) string {
	for _, n := range names {
		if n.V == v {
			return n.N
		}
	}
	if !flags || v == 0 {
		return typ + "(" + strconv.FormatUint(v, 10) + ")"
	}
	var parts []string
	rest := v
	for _, n := range names {
		if bits.OnesCount64(n.V) == 1 && rest&n.V != 0 {
			parts = append(parts, n.N)
			rest &^= n.V
		}
	}
	if rest != 0 {
		parts = append(parts, "0x"+strconv.FormatUint(rest, 16))
	}
	return strings.Join(parts, "|")
}
