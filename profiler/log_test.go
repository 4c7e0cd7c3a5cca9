package profiler

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestEnvLoggerLevels(t *testing.T) {
	cases := []struct {
		level   string
		enabled slog.Level
		hidden  slog.Level
	}{
		{"", slog.LevelWarn, slog.LevelInfo},
		{"debug", slog.LevelDebug, slog.LevelDebug - 1},
		{"INFO", slog.LevelInfo, slog.LevelDebug},
		{" warn ", slog.LevelWarn, slog.LevelInfo},
		{"error", slog.LevelError, slog.LevelWarn},
	}
	for _, c := range cases {
		var b syncBuffer
		l := newEnvLogger(env(map[string]string{EnvLogLevel: c.level}), &b)
		ctx := context.Background()
		if !l.Enabled(ctx, c.enabled) || l.Enabled(ctx, c.hidden) {
			t.Errorf("%s=%q: enabled(%v)=%v enabled(%v)=%v", EnvLogLevel, c.level, c.enabled, l.Enabled(ctx, c.enabled), c.hidden, l.Enabled(ctx, c.hidden))
		}
		if b.String() != "" {
			t.Errorf("%s=%q: unexpected output %q", EnvLogLevel, c.level, b.String())
		}
	}
}

func TestEnvLoggerPrefixAndBadLevel(t *testing.T) {
	var b syncBuffer
	l := newEnvLogger(env(map[string]string{EnvLogLevel: "verbose"}), &b)
	l.Warn("second line")
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %q", b.String())
	}
	if !strings.Contains(lines[0], `CLRPROF_LOG_LEVEL=\"verbose\" is not one of`) || !strings.Contains(lines[0], "using warn") {
		t.Errorf("bad level not explained: %s", lines[0])
	}
	for _, line := range lines {
		if !strings.HasPrefix(line, "clrprof: ") || !strings.Contains(line, "level=WARN") {
			t.Errorf("line without prefix or level: %q", line)
		}
	}
	if l.Enabled(context.Background(), slog.LevelInfo) {
		t.Error("bad level did not fall back to warn")
	}
}

func TestEnvLoggerOff(t *testing.T) {
	var b syncBuffer
	l := newEnvLogger(env(map[string]string{EnvLogLevel: "off", EnvLogFile: filepath.Join(t.TempDir(), "x.log")}), &b)
	l.Error("nobody hears this")
	if b.String() != "" {
		t.Errorf("off logger wrote %q", b.String())
	}
}

func TestEnvLoggerFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clrprof.log")
	if err := os.WriteFile(path, []byte("existing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	newEnvLogger(env(map[string]string{EnvLogFile: path}), &stderr).Warn("first")
	newEnvLogger(env(map[string]string{EnvLogFile: path, EnvLogLevel: "info"}), &stderr).Info("second")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := string(data)
	if !strings.HasPrefix(got, "existing\n") || !strings.Contains(got, "msg=first") || !strings.Contains(got, "msg=second") {
		t.Errorf("log file content:\n%s", got)
	}
	if stderr.String() != "" {
		t.Errorf("wrote to stderr although a file was given: %q", stderr.String())
	}
}

func TestEnvLoggerBadFile(t *testing.T) {
	var stderr syncBuffer
	bad := filepath.Join(t.TempDir(), "no", "such", "dir", "x.log")
	l := newEnvLogger(env(map[string]string{EnvLogFile: bad}), &stderr)
	l.Warn("still here")
	out := stderr.String()
	if !strings.Contains(out, "cannot open log file") || !strings.Contains(out, "logging to stderr") || !strings.Contains(out, "still here") {
		t.Errorf("stderr:\n%s", out)
	}
}

// TestLoggerIsTheSDKs: Logger returns the logger given with WithLogger
// (what the SDK itself writes to), never nil.
func TestLoggerIsTheSDKs(t *testing.T) {
	prev := userLogger.Load()
	defer userLogger.Store(prev)
	if Logger() == nil {
		t.Fatal("Logger() is nil")
	}
	var buf bytes.Buffer
	mine := slog.New(slog.NewTextHandler(&buf, nil))
	userLogger.Store(mine)
	if Logger() != mine {
		t.Fatal("Logger() is not the logger given with WithLogger")
	}
	Logger().Info("from the profiler")
	logger().Info("from the SDK")
	if out := buf.String(); !strings.Contains(out, "from the profiler") || !strings.Contains(out, "from the SDK") {
		t.Fatalf("records did not reach the same handler:\n%s", out)
	}
}
