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

func TestStartTime(t *testing.T) {
	for _, c := range []struct {
		line, key string
		ok        bool
	}{
		{"9 (a) b (c)) S 1 9 9 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 123456 1000 10", "123456", true},
		{"9 (a) S 1 9 9 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0", "", false},
		{"9 (a) S 1 9 9 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 -5 1000", "", false},
		{"9 a S", "", false},
	} {
		key, ok := StartTime([]byte(c.line))
		if key != c.key || ok != c.ok {
			t.Errorf("StartTime(%q) = %q, %v; want %q, %v", c.line, key, ok, c.key, c.ok)
		}
	}
}
