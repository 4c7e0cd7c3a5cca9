package metadata

import (
	"fmt"
	"testing"
)

func TestAddressFormat(t *testing.T) {
	a := Address(0x3fffd8)
	for _, c := range []struct{ format, want string }{
		{"%v", "0x3fffd8"},
		{"%s", "0x3fffd8"},
		{"%x", "3fffd8"},
		{"%#x", "0x3fffd8"},
		{"%#X", "0X3FFFD8"},
		{"%d", "4194264"},
		{"%10d", "   4194264"},
		{"%08x", "003fffd8"},
	} {
		if got := fmt.Sprintf(c.format, a); got != c.want {
			t.Errorf("Sprintf(%q, Address(0x3fffd8)) = %q, want %q", c.format, got, c.want)
		}
	}
}
