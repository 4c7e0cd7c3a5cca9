package diag

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/clrprof/clrprof/internal/procstat"
)

// procRoot is where the process table is read; tests may point it
// elsewhere.
var procRoot = "/proc"

// socketPrefix returns the name every diagnostics socket of pid starts
// with; the rest is "<disambiguation key>-socket".
func socketPrefix(pid int) string { return "dotnet-diagnostic-" + strconv.Itoa(pid) + "-" }

// SocketPath finds the diagnostics socket of process pid:
// dotnet-diagnostic-{pid}-{key}-socket, where key is the process's start
// time in clock ticks since boot, in the target's temporary directory. That
// directory is the target's $TMPDIR (read from /proc/{pid}/environ when
// permitted), else this process's $TMPDIR, else /tmp; all three are
// searched. When the process's start time can be read, only a socket with
// that key (or key 0, which a runtime uses when it cannot read its own
// start time) is taken: one with another key is a leftover of an earlier
// process that had the same pid and was killed before it could remove it,
// and connecting to it would be refused. When the start time cannot be
// read, the newest candidate wins.
//
// The error matches ErrProcessNotFound if there is no such process, and
// ErrNotSupported if it has no socket, with the reason when it can tell:
// not a .NET process, a runtime older than .NET Core 3.0, or a diagnostics
// server that is disabled (DOTNET_EnableDiagnostics=0).
func SocketPath(pid int) (string, error) {
	if pid <= 0 {
		return "", &Error{Op: "find socket", PID: pid, Kind: ErrProcessNotFound, Detail: "invalid pid"}
	}
	if _, err := os.Stat(filepath.Join(procRoot, strconv.Itoa(pid))); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", &Error{Op: "find socket", PID: pid, Kind: ErrProcessNotFound}
		}
		return "", &Error{Op: "find socket", PID: pid, Kind: ErrProcessNotFound, Err: err}
	}
	dirs := tempDirs(pid)
	key := startTime(pid)
	p, stale := findSocket(pid, key, dirs)
	if p != "" {
		return p, nil
	}
	why := noSocketReason(pid, dirs)
	if len(stale) > 0 {
		why += fmt.Sprintf(" (ignored %d leftover socket(s) of an earlier process with pid %d, whose key is not this process's start time %s: %s)",
			len(stale), pid, key, strings.Join(stale, ", "))
	}
	return "", &Error{Op: "find socket", PID: pid, Kind: ErrNotSupported, Detail: why}
}

// tempDirs lists where pid's runtime may have created its socket.
func tempDirs(pid int) []string {
	var dirs []string
	add := func(d string) {
		if d == "" {
			return
		}
		d = filepath.Clean(d)
		for _, x := range dirs {
			if x == d {
				return
			}
		}
		dirs = append(dirs, d)
	}
	if env, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "environ")); err == nil {
		for _, kv := range bytes.Split(env, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, []byte("TMPDIR=")); ok {
				add(string(v))
			}
		}
	}
	add(os.Getenv("TMPDIR"))
	add("/tmp")
	return dirs
}

// startTime returns field 22 of /proc/{pid}/stat (start time in clock
// ticks since boot), the runtime's disambiguation key, or "" if unknown.
func startTime(pid int) string {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return ""
	}
	k, _ := procstat.StartTime(b)
	return k
}

// findSocket returns the best socket of pid in dirs, or "". If key (the
// process's start time) is known, a socket with another key (other than 0)
// is not a candidate; stale lists those.
func findSocket(pid int, key string, dirs []string) (best string, stale []string) {
	prefix := socketPrefix(pid)
	type cand struct {
		path  string
		match bool
		mtime int64
	}
	var cands []cand
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			name := e.Name()
			if !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, "-socket") {
				continue
			}
			k := strings.TrimSuffix(strings.TrimPrefix(name, prefix), "-socket")
			if _, err := strconv.ParseUint(k, 10, 64); err != nil {
				continue
			}
			info, err := e.Info()
			if err != nil || info.Mode()&fs.ModeSocket == 0 {
				continue
			}
			path := filepath.Join(d, name)
			match := key != "" && k == key
			if key != "" && !match && k != "0" {
				stale = append(stale, path)
				continue
			}
			cands = append(cands, cand{path, match, info.ModTime().UnixNano()})
		}
	}
	if len(cands) == 0 {
		return "", stale
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].match != cands[j].match {
			return cands[i].match
		}
		return cands[i].mtime > cands[j].mtime
	})
	return cands[0].path, stale
}

// tooOldForAttach says whether the libcoreclr.so at path lib (its directory
// names the runtime version) is older than .NET Core 3.0, and so has no
// profiler attach, and says so.
func tooOldForAttach(lib string) (string, bool) {
	version := filepath.Base(filepath.Dir(lib))
	if major, ok := leadingInt(version); ok && major < 3 {
		return fmt.Sprintf("it runs .NET Core %s (%s), and profiler attach needs .NET Core 3.0 or later", version, lib), true
	}
	return "", false
}

// coreclrOf returns the path of the libcoreclr.so process pid has loaded,
// or "".
func coreclrOf(pid int) string {
	maps, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "maps"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(maps), "\n") {
		if i := strings.Index(line, "/"); i >= 0 && strings.HasSuffix(line, "/libcoreclr.so") {
			return line[i:]
		}
	}
	return ""
}

// noSocketReason explains why pid has no diagnostics socket, as far as
// its memory map and environment tell.
func noSocketReason(pid int, dirs []string) string {
	where := fmt.Sprintf("no %s*-socket in %s", socketPrefix(pid), strings.Join(dirs, ", "))
	maps, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "maps"))
	if err != nil {
		return where + " (cannot read its memory map to say why: " + err.Error() + ")"
	}
	lib := ""
	for _, line := range strings.Split(string(maps), "\n") {
		if i := strings.Index(line, "/"); i >= 0 && strings.HasSuffix(line, "/libcoreclr.so") {
			lib = line[i:]
			break
		}
	}
	if lib == "" {
		return where + "; it has not loaded libcoreclr.so: not a .NET (CoreCLR) process, or one still starting"
	}
	if why, old := tooOldForAttach(lib); old {
		return where + "; " + why
	}
	if env, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "environ")); err == nil {
		for _, kv := range strings.Split(string(env), "\x00") {
			for _, p := range []string{"DOTNET_EnableDiagnostics=0", "COMPlus_EnableDiagnostics=0"} {
				if kv == p {
					return fmt.Sprintf("%s; its environment sets %s, which turns the diagnostics server off", where, p)
				}
			}
		}
	}
	return fmt.Sprintf("%s; it runs %s: its diagnostics server may still be starting, be disabled, or use another temporary directory", where, lib)
}

func leadingInt(s string) (int, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, err := strconv.Atoi(s[:i])
	return n, err == nil
}
