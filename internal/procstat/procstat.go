// Package procstat reads /proc files (proc(5)): it splits the lines of
// /proc/<pid>/stat and /proc/<pid>/task/<tid>/stat, and reads the mapping
// lines of /proc/<pid>/maps and smaps.
package procstat

import (
	"bytes"
	"strconv"
	"strings"
)

// Split returns the line's head, from the process id through the command
// name's closing parenthesis, and the fields after it (rest[0] is the
// state, field 3). The command name is in parentheses and may itself hold
// spaces and parentheses, so the last ')' ends it. ok is false if the line
// has no command name followed by a field.
func Split(stat []byte) (head, rest []byte, ok bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) || stat[i+1] != ' ' {
		return nil, nil, false
	}
	return stat[:i+1], stat[i+2:], true
}

// StartTime returns field 22 of the line (starttime: clock ticks after
// boot when the process started) as the decimal text it is, which is the
// disambiguation key a .NET runtime puts in its diagnostics socket's name;
// ok is false if the line has no such number.
func StartTime(stat []byte) (key string, ok bool) {
	_, rest, ok := Split(stat)
	if !ok {
		return "", false
	}
	f := strings.Fields(string(rest))
	// f[0] is field 3 (state); field 22 is f[19].
	if len(f) < 20 {
		return "", false
	}
	if _, err := strconv.ParseUint(f[19], 10, 64); err != nil {
		return "", false
	}
	return f[19], true
}
