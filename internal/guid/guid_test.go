package guid

import (
	"strings"
	"testing"
)

func TestParseAndFormat(t *testing.T) {
	const want = "{8A5D2C3E-1F4B-4E6A-9D7C-0B3E5F1A2C4D}"
	for _, in := range []string{want, strings.ToLower(want), " 8a5d2c3e-1f4b-4e6a-9d7c-0b3e5f1a2c4d "} {
		u, err := Parse(in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		if got := Format(u); got != want {
			t.Errorf("Format(Parse(%q)) = %s, want %s", in, got, want)
		}
	}
	for _, bad := range []string{"", "{8A5D2C3E-1F4B-4E6A-9D7C-0B3E5F1A2C4D", "8A5D2C3E1F4B4E6A9D7C0B3E5F1A2C4D", "{8A5D2C3E-1F4B-4E6A-9D7C-0B3E5F1A2CZZ}", "urn:uuid:8a5d2c3e-1f4b-4e6a-9d7c-0b3e5f1a2c4d"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}
