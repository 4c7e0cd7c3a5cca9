package gen

import (
	"fmt"
	"strings"
	"testing"
)

func TestOverlayCheckRejectsUnknownTargets(t *testing.T) {
	f := &File{Interfaces: []*Interface{
		{Name: "ICorProfilerInfo2", Methods: []*Method{{Name: "GetClassIDInfo2"}}},
		{Name: "ICorProfilerInfo4", Methods: []*Method{
			{Name: "GetFunctionFromIP2", Params: []*Param{{Name: "ip"}, {Name: "pFunctionId"}}},
		}},
	}}
	for _, c := range []struct{ src, want string }{
		{"param ICorProfilerInfo4.GetFunctionFromIP2 ip role=addr\n", ""},
		{"param ICorProfilerInfo2.GetFunctionFromIP2 ip role=addr\n", "no such interface method"},
		{"param ICorProfilerInfo4.GetFunctionFromIP2 pIP role=addr\n", "no parameter pIP"},
		{"method ICorProfilerInfo4.GetFunctionFromIP2 sfalse\n", ""},
		{"method ICorProfilerInfo4.IsArrayClass sfalse\n", "no such interface method"},
		{"param ICorProfilerCallback11.LoadAsNotificationOnly pbNotificationOnly role=out\n", ""}, // not in these inputs
	} {
		ov, err := ParseOverlay("overlay.txt", []byte(c.src))
		if err != nil {
			t.Fatalf("%q: %v", c.src, err)
		}
		err = ov.Check(f)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.src, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: error %v, want one containing %q", c.src, err, c.want)
		}
	}
}

func TestOverlayValues(t *testing.T) {
	newFile := func() *File {
		return &File{Enums: []*Enum{{Name: "COR_PRF_HIGH_MONITOR", Values: []*EnumValue{
			{Name: "A", Value: 1}, {Name: "B", Value: 0x100}, {Name: "ALL", Value: 0x101}, {Name: "MASK", Value: 0x1c},
		}}}}
	}
	names := func(f *File) string {
		var s []string
		for _, v := range f.Enums[0].Values {
			s = append(s, fmt.Sprintf("%s=%#x", v.Name, v.Value))
		}
		return strings.Join(s, " ")
	}
	for _, c := range []struct{ src, want, err string }{
		// Inserted after the named enumerator, or at the end.
		{"value COR_PRF_HIGH_MONITOR NEW 0x200 after=B\n", "A=0x1 B=0x100 NEW=0x200 ALL=0x101 MASK=0x1c", ""},
		{"value COR_PRF_HIGH_MONITOR NEW 512\n", "A=0x1 B=0x100 ALL=0x101 MASK=0x1c NEW=0x200", ""},
		// Already in the inputs with that value (a newer input set): nothing.
		{"value COR_PRF_HIGH_MONITOR B 0x100 after=A\n", "A=0x1 B=0x100 ALL=0x101 MASK=0x1c", ""},
		// A mask that grew: replaced only from the value was= names.
		{"value COR_PRF_HIGH_MONITOR MASK 0x3c was=0x1c\n", "A=0x1 B=0x100 ALL=0x101 MASK=0x3c", ""},
		{"value COR_PRF_HIGH_MONITOR MASK 0x3c was=0x0c\n", "", "the inputs have 0x1c, the overlay 0x3c"},
		{"value COR_PRF_HIGH_MONITOR B 0x200\n", "", "the inputs have 0x100, the overlay 0x200"},
		{"value COR_PRF_HIGH_MONITOR NEW 0x200 was=0x100\n", "", "the inputs lack NEW"},
		{"value NO_SUCH_ENUM NEW 0x200\n", "", "no enum NO_SUCH_ENUM"},
	} {
		ov, err := ParseOverlay("overlay.txt", []byte(c.src))
		if err != nil {
			t.Fatalf("%q: %v", c.src, err)
		}
		f := newFile()
		skipped, err := ov.AddValues(f)
		if len(skipped) != 0 {
			t.Errorf("%q: skipped %q", c.src, skipped)
		}
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want one containing %q", c.src, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.src, err)
			continue
		}
		if got := names(f); got != c.want {
			t.Errorf("%q: %s, want %s", c.src, got, c.want)
		}
		// Twice is once.
		if _, err := ov.AddValues(f); err != nil || names(f) != c.want {
			t.Errorf("%q applied twice: %v, %s", c.src, err, names(f))
		}
	}
	// Inputs older than the enumerator the value follows: skipped.
	ov, err := ParseOverlay("overlay.txt", []byte("value COR_PRF_HIGH_MONITOR NEW 0x200 after=NOPE\n"))
	if err != nil {
		t.Fatal(err)
	}
	f := newFile()
	if skipped, err := ov.AddValues(f); err != nil || len(skipped) != 1 || skipped[0] != "COR_PRF_HIGH_MONITOR.NEW" || names(f) != "A=0x1 B=0x100 ALL=0x101 MASK=0x1c" {
		t.Errorf("after= an enumerator the inputs lack: skipped %q, %v, %s", skipped, err, names(f))
	}
	for _, bad := range []string{
		"value COR_PRF_HIGH_MONITOR NEW\n",
		"value COR_PRF_HIGH_MONITOR NEW 0x2g0\n",
		"value COR_PRF_HIGH_MONITOR NEW 0x200 before=A\n",
		"value COR_PRF_HIGH_MONITOR NEW 0x200 was=x\n",
		"value COR_PRF_HIGH_MONITOR NEW 0x200 after\n",
	} {
		if _, err := ParseOverlay("overlay.txt", []byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestOverlayValuesInGeneratedCode checks that the project's value rules
// reach the generated constants: the flag and the method-impl bit of
// .NET 11 that the shared inputs lack.
func TestOverlayValuesInGeneratedCode(t *testing.T) {
	out := generateFrom(t, genInputDir(t, ""))
	if len(out.SkippedValues) != 0 {
		t.Errorf("value rules skipped on the current inputs (after= misspelt?): %q", out.SkippedValues)
	}
	for path, want := range map[string][]string{
		"profiler/types_gen.go": {"HighGCSkipAllocatedByClassStatistic HighMonitor = 512"},
		"metadata/types_gen.go": {"MiAsync MethodImpl = 8192", "GpAllowByRefLike GenericParamAttr = 32"},
	} {
		for _, w := range want {
			if !strings.Contains(string(out.Files[path]), w) {
				t.Errorf("%s lacks %q", path, w)
			}
		}
	}
}
