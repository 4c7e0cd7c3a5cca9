package profiler

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
)

// Environment variables read (once, on first use) by the default logger.
const (
	EnvLogLevel = "CLRPROF_LOG_LEVEL" // debug, info, warn (default), error or off
	EnvLogFile  = "CLRPROF_LOG_FILE"  // append to this file instead of stderr
)

var (
	userLogger    atomic.Pointer[slog.Logger] // set by WithLogger
	defaultOnce   sync.Once
	defaultLogger *slog.Logger
)

// Logger returns the logger the SDK writes its own records to: the one
// given to Register with WithLogger, else the default one (text on stderr,
// or appended to CLRPROF_LOG_FILE, at CLRPROF_LOG_LEVEL, each line
// prefixed "clrprof: "). A profiler can log through it too, so that its
// records and the SDK's go to the same place at the same level:
//
//	profiler.Logger().Info("rewrote", "method", name)
//
// Never nil. Safe for concurrent use, from any goroutine or callback.
func Logger() *slog.Logger { return logger() }

// logger returns the logger every part of the package logs through: the one
// given with WithLogger, else the default one built from the environment.
// Built lazily so that package initialisation does no I/O.
func logger() *slog.Logger {
	if l := userLogger.Load(); l != nil {
		return l
	}
	defaultOnce.Do(func() {
		defaultLogger = newEnvLogger(os.Getenv, os.Stderr)
	})
	return defaultLogger
}

// newEnvLogger builds the default logger: text records on stderr (never
// stdout, which belongs to the application), each line prefixed "clrprof: ",
// at level WARN unless CLRPROF_LOG_LEVEL says otherwise, appended to
// CLRPROF_LOG_FILE if that is set. A bad value is reported as a warning and
// the default used instead.
func newEnvLogger(getenv func(string) string, stderr io.Writer) *slog.Logger {
	var problems []string
	level := slog.LevelWarn
	off := false
	switch v := strings.ToLower(strings.TrimSpace(getenv(EnvLogLevel))); v {
	case "":
	case "debug":
		level = slog.LevelDebug
	case "info":
		level = slog.LevelInfo
	case "warn", "warning":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	case "off", "none":
		off = true
	default:
		problems = append(problems, fmt.Sprintf("%s=%q is not one of debug, info, warn, error, off; using warn", EnvLogLevel, getenv(EnvLogLevel)))
	}
	if off {
		return slog.New(slog.DiscardHandler)
	}
	w := stderr
	if path := getenv(EnvLogFile); path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: cannot open log file: %v; logging to stderr", EnvLogFile, err))
		} else {
			w = f // kept open for the life of the process
		}
	}
	l := slog.New(slog.NewTextHandler(&prefixWriter{w: w, prefix: "clrprof: "}, &slog.HandlerOptions{Level: level}))
	for _, p := range problems {
		l.Warn(p)
	}
	return l
}

// prefixWriter prepends prefix to every Write; slog's handlers write one
// whole record per call, so every line gets the prefix, in a single write.
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	buf := make([]byte, 0, len(p.prefix)+len(b))
	buf = append(buf, p.prefix...)
	buf = append(buf, b...)
	if _, err := p.w.Write(buf); err != nil {
		return 0, err
	}
	return len(b), nil
}
