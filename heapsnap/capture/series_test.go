package capture

import "testing"

func TestParseSize(t *testing.T) {
	for in, want := range map[string]uint64{"100000": 100000, "64K": 64 << 10, "512M": 512 << 20, "2G": 2 << 30} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "M", "-5M", "1.5G", "12MB", "+7", " 7", "7 "} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
}
