package harness

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Shop is a running instance of the shop service of ../shared/dotnet/apps/shop
// (ASP.NET Core; PostgreSQL through Npgsql and Dapper, Redis through
// StackExchange.Redis, a payment service over HttpClient), with its
// PostgreSQL server, its Redis server and the payment instance (a second
// shop answering /pay), all on loopback in a directory of the test's.
type Shop struct {
	URL    string // the shop, e.g. http://127.0.0.1:41234
	PayURL string // the payment instance
	PID    int    // the shop process
	PayPID int    // the payment process
	Dir    string // PostgreSQL's data, logs (shop.log, pay.log), env

	t       testing.TB
	stack   string
	stopped bool
}

// ShopOptions configure StartShop.
type ShopOptions struct {
	// Env is extra environment of both shop processes (a profiler's
	// CORECLR_* variables, say), KEY=VALUE.
	Env []string
	// PayEnv, when not nil, is the payment process's extra environment
	// instead of Env (empty: nothing extra there).
	PayEnv []string
	// Variant "otel" runs the shop built with OpenTelemetry .NET's own
	// instrumentation (apps/shop/otel).
	Variant string
	// Dir is where the stack lives (default: a new directory of the test's).
	Dir string
}

// ShopDir returns the shop's folder (apps/shop of the shared dotnet folder:
// $CLRPROF_SHARED/dotnet, default ../shared beside the module root).
func ShopDir() (string, error) {
	shared := os.Getenv("CLRPROF_SHARED")
	if shared == "" {
		root, err := ModuleRoot()
		if err != nil {
			return "", err
		}
		shared = filepath.Join(filepath.Dir(root), "shared")
	}
	dir := filepath.Join(shared, "dotnet", "apps", "shop")
	if _, err := os.Stat(filepath.Join(dir, "stack.sh")); err != nil {
		return "", fmt.Errorf("harness: the shop is not at %s (%v)", dir, err)
	}
	return dir, nil
}

// ShopRuntime reports whether the shop can run on rt (it needs ASP.NET
// Core 10 or later: the runtimes laid out by ../shared/dotnet/install.sh
// have it), and if not, why.
func ShopRuntime(rt Runtime) (bool, string) {
	if rt.Major < 10 {
		return false, fmt.Sprintf("the shop is built for net10.0; %s cannot run it", rt.Name)
	}
	if _, err := os.Stat(filepath.Join(rt.Dir, "shared", "Microsoft.AspNetCore.App")); err != nil {
		return false, fmt.Sprintf("%s has no ASP.NET Core (%s)", rt.Name, rt.Dir)
	}
	return true, ""
}

// StartShop starts the shop, its PostgreSQL and Redis servers and its
// payment instance on rt with apps/shop/stack.sh, waits until they answer,
// and stops them when the test ends (Stop does it earlier). It fails the
// test when something does not start, with the logs.
func StartShop(t testing.TB, rt Runtime, o ShopOptions) *Shop {
	t.Helper()
	if ok, why := ShopRuntime(rt); !ok {
		t.Fatalf("harness.StartShop: %s", why)
	}
	shopDir, err := ShopDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := o.Dir
	if dir == "" {
		// PostgreSQL runs as the postgres user when the test is root: the
		// directory must be reachable by it (t.TempDir's parents are 0700).
		dir, err = os.MkdirTemp("", "clrprof-shop-")
		if err != nil {
			t.Fatal(err)
		}
		_ = os.Chmod(dir, 0o755)
		t.Cleanup(func() {
			if !t.Failed() {
				_ = os.RemoveAll(dir)
			} else {
				t.Logf("harness: the shop's stack kept in %s", dir)
			}
		})
	}
	s := &Shop{Dir: dir, t: t, stack: filepath.Join(shopDir, "stack.sh")}
	env := os.Environ()
	write := func(name string, kv []string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(kv, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env = append(env, "SHOP_ENV="+write("shop.env", o.Env))
	if o.PayEnv != nil {
		env = append(env, "PAY_ENV="+write("pay.env", o.PayEnv))
	} else {
		env = append(env, "PAY_ENV=")
	}
	if o.Variant != "" {
		env = append(env, "SHOP_VARIANT="+o.Variant)
	}
	cmd := exec.Command("bash", s.stack, "start", dir, rt.Dir)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	t.Cleanup(s.Stop)
	if err != nil {
		t.Fatalf("harness.StartShop: stack.sh start: %v\n%s\n%s", err, out, s.Logs())
	}
	kv, err := readEnvFile(filepath.Join(dir, "env"))
	if err != nil {
		t.Fatalf("harness.StartShop: %v\n%s", err, out)
	}
	s.URL, s.PayURL = kv["SHOP_URL"], kv["PAY_URL"]
	s.PID, _ = strconv.Atoi(kv["SHOP_PID"])
	s.PayPID, _ = strconv.Atoi(kv["PAY_PID"])
	if s.URL == "" || s.PID == 0 {
		t.Fatalf("harness.StartShop: stack.sh gave %v", kv)
	}
	return s
}

func readEnvFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	kv := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			kv[k] = v
		}
	}
	return kv, sc.Err()
}

// Logs returns the tails of the shop's and the payment instance's output.
func (s *Shop) Logs() string {
	var b strings.Builder
	for _, name := range []string{"shop.log", "pay.log"} {
		data, err := os.ReadFile(filepath.Join(s.Dir, name))
		if err != nil {
			continue
		}
		if len(data) > 8192 {
			data = data[len(data)-8192:]
		}
		fmt.Fprintf(&b, "--- %s (tail)\n%s\n", name, data)
	}
	return b.String()
}

// Get requests path from the shop and returns the status and body; a
// transport error fails the test.
func (s *Shop) Get(path string) (int, string) {
	return s.do(http.MethodGet, path)
}

// Post is Get with POST and no body.
func (s *Shop) Post(path string) (int, string) {
	return s.do(http.MethodPost, path)
}

func (s *Shop) do(method, path string) (int, string) {
	s.t.Helper()
	req, err := http.NewRequest(method, s.URL+path, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	c := http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v\n%s", method, path, err, s.Logs())
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	return resp.StatusCode, string(body)
}

// Stop stops the shop and the payment instance with SIGTERM (what a
// service manager does: the runtime shuts down, a profiler gets its
// Shutdown callback) and waits up to 30 s for them to exit, then stops
// Redis and PostgreSQL. It is idempotent.
func (s *Shop) Stop() {
	if s.stopped || s.stack == "" {
		return
	}
	s.stopped = true
	for _, pid := range []int{s.PID, s.PayPID} {
		if pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}
	}
	for _, pid := range []int{s.PID, s.PayPID} {
		if pid > 0 && !waitGone(pid, 30*time.Second) {
			s.t.Errorf("harness: shop process %d did not exit 30 s after SIGTERM; killed\n%s", pid, s.Logs())
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	out, err := exec.Command("bash", s.stack, "stop", s.Dir).CombinedOutput()
	if err != nil {
		s.t.Errorf("harness: stack.sh stop: %v\n%s", err, out)
	}
}

// waitGone waits until process pid no longer exists (or is a zombie of
// nobody's: stack.sh's children are reparented to init, which reaps them).
func waitGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		// state is the field after the parenthesised command name
		if i := strings.LastIndexByte(string(data), ')'); i > 0 && i+2 < len(data) && data[i+2] == 'Z' {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}
