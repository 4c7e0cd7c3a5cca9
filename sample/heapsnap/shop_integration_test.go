package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/harness"
)

// TestShopLeak loads sample/heapsnap into the shop (ASP.NET Core, with
// PostgreSQL, Redis and its payment instance running), calls /leak 100
// times (64 KB each), snapshots with SIGUSR2, calls it 50 more times and
// snapshots again. Each report must name Work.Leak as retaining at least
// what the shop leaked, through static → list → array → Leaked → byte[],
// and the second's diff must name the growth there.
func TestShopLeak(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the shop with PostgreSQL and Redis")
	}
	lib := harness.BuildProfiler(t, "./sample/heapsnap")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		if ok, why := harness.ShopRuntime(rt); !ok {
			t.Skip(why)
		}
		dir := t.TempDir()
		env := append(harness.ProfilerEnv(lib, clsid), "HEAPSNAP_DIR="+dir)
		shop := harness.StartShop(t, rt, harness.ShopOptions{Env: env, PayEnv: []string{}})
		leak := func(n int) {
			for range n {
				if code, body := shop.Get("/leak?kb=64"); code != 200 {
					t.Fatalf("/leak: %d %s", code, body)
				}
			}
		}
		snap := func(n int) string {
			if err := syscall.Kill(shop.PID, syscall.SIGUSR2); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, fmt.Sprintf("heap-%d.txt", n))
			for range 1200 {
				if rep, err := os.ReadFile(file); err == nil {
					return string(rep)
				}
				time.Sleep(100 * time.Millisecond)
			}
			t.Fatalf("no %s\n%s", file, shop.Logs())
			return ""
		}
		leak(100)
		rep1 := snap(1)
		leak(50)
		rep2 := snap(2)
		shop.Stop()
		for i, c := range []struct {
			rep    string
			leaked int
		}{{rep1, 100}, {rep2, 150}} {
			path := "[static] → Work.Leak → System.Collections.Generic.List<Leaked>"
			j := strings.Index(c.rep, "Largest retainers")
			if j < 0 || !strings.Contains(strings.SplitN(c.rep[j:], "\n", 4)[2], path) {
				t.Errorf("snapshot %d: the largest retainer is not %s:\n%s", i+1, path, c.rep)
			}
			checkPath(t, dir, i+1, c.leaked, []string{"[static]", "Work.Leak", "System.Collections.Generic.List<Leaked>", "Leaked[]", "Leaked", "byte[]"})
		}
		since := rep2[strings.Index(rep2, "Since snapshot 1"):]
		if !strings.Contains(since, "[static] → Work.Leak → System.Collections.Generic.List<Leaked> → Leaked[] → Leaked → byte[]") {
			t.Errorf("the diff does not name the path holding the growth:\n%s", since)
		}
		t.Logf("heap-2.txt:\n%s", rep2)
	})
}
