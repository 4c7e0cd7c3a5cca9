package ilrw

import (
	"testing"

	"github.com/clrprof/clrprof/metadata"
)

func TestCallSiteOf(t *testing.T) {
	for _, c := range []struct {
		name    string
		sig     []byte
		params  int
		hasThis bool
		void    bool
	}{
		{"static void()", []byte{0x00, 0x00, 0x01}, 0, false, true},
		{"instance int32(string, object)", []byte{0x20, 0x02, 0x08, 0x0e, 0x1c}, 2, true, false},
		{"generic !!0 M<T>(!!0[])", []byte{0x10, 0x01, 0x01, 0x1e, 0x00, 0x1d, 0x1e, 0x00}, 1, false, false},
		{"modreq void", []byte{0x00, 0x00, 0x1f, 0x09, 0x01}, 0, false, true},
		{"modopt pinned void", []byte{0x00, 0x00, 0x20, 0x09, 0x45, 0x01}, 0, false, false},
		{"vararg with sentinel", []byte{0x05, 0x02, 0x01, 0x08, 0x41, 0x08}, 2, false, true},
		{"explicit this", []byte{0x60, 0x01, 0x01, 0x12, 0x08}, 1, false, true},
		{"generic inst return", []byte{0x00, 0x00, 0x15, 0x12, 0x10, 0x02, 0x08, 0x0e}, 0, false, false},
		{"array param", []byte{0x00, 0x01, 0x01, 0x14, 0x08, 0x02, 0x01, 0x05, 0x01, 0x00}, 1, false, true},
		{"fnptr param", []byte{0x00, 0x01, 0x01, 0x1b, 0x00, 0x01, 0x08, 0x08}, 1, false, true},
	} {
		s, err := metadata.ParseMethodSig(c.sig)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		want := CallSite{Params: c.params, HasThis: c.hasThis, ReturnsValue: !c.void}
		if got := CallSiteOf(s); got != want {
			t.Errorf("%s: %+v, want %+v", c.name, got, want)
		}
	}
}
