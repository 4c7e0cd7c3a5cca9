package procstat

import "testing"

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		line, head, rest string
		ok               bool
	}{
		{"4242 (dotnet) S 1 4242", "4242 (dotnet)", "S 1 4242", true},
		{"4244 (a) b) (c) D 1", "4244 (a) b) (c)", "D 1", true},
		{"4245 (x)", "", "", false},
		{"4246 x S 1", "", "", false},
		{"", "", "", false},
	} {
		head, rest, ok := Split([]byte(c.line))
		if string(head) != c.head || string(rest) != c.rest || ok != c.ok {
			t.Errorf("Split(%q) = %q, %q, %v; want %q, %q, %v", c.line, head, rest, ok, c.head, c.rest, c.ok)
		}
	}
}
