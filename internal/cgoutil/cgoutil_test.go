package cgoutil

import (
	"encoding/binary"
	"testing"
	"unsafe"

	"github.com/google/uuid"
)

// The COM layout of a GUID: Data1, Data2 and Data3 little-endian, Data4 as
// is; the round trip gives the UUID back. (Was profiler's
// TestGUIDConversion, over the converters the profiler object now uses.)
func TestGUIDConversion(t *testing.T) {
	u := uuid.MustParse("5C2E9F41-7A3B-4D8E-9C16-2F0B8A4D6E73")
	g := ToGUID(u)
	if d1 := binary.LittleEndian.Uint32(g[0:4]); d1 != 0x5C2E9F41 {
		t.Errorf("Data1 %#x", d1)
	}
	if d2, d3 := binary.LittleEndian.Uint16(g[4:6]), binary.LittleEndian.Uint16(g[6:8]); d2 != 0x7A3B || d3 != 0x4D8E {
		t.Errorf("Data2 %#x Data3 %#x", d2, d3)
	}
	if g[8] != 0x9C || g[15] != 0x73 {
		t.Errorf("Data4 %x", g[8:])
	}
	if back := FromGUID(g); back != u {
		t.Errorf("round trip %v != %v", back, u)
	}
	if back := GUIDAt(unsafe.Pointer(&g)); back != u {
		t.Errorf("GUIDAt %v != %v", back, u)
	}
	if GUIDAt(nil) != (uuid.UUID{}) {
		t.Error("GUIDAt(nil) is not the zero UUID")
	}
}
