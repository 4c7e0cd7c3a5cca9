package gen

import (
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
