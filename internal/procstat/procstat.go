// Package procstat splits the lines of /proc/<pid>/stat and
// /proc/<pid>/task/<tid>/stat (proc(5)).
package procstat

import "bytes"

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
