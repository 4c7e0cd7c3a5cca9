package procstat

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
)

// A Mapping is one mapping of /proc/PID/smaps: its address range, the
// file it maps ("" for anonymous memory; names such as "[heap]" as the
// kernel writes them), how much of it is resident and how much of that is
// anonymous (for a file's mapping: pages written since, such as the data
// the dynamic loader relocated).
type Mapping struct {
	Start, End uint64
	Path       string
	RSS        uint64 // bytes
	Anon       uint64 // bytes of RSS that are anonymous
}

// MapsLine reads a mapping line of /proc/PID/maps or smaps: its address
// range [Start, End), its permissions ("r-xp"), its file offset and its path
// ("" for anonymous memory; the fields after the inode, joined by one
// space). ok is false for any other line, or a range that is empty.
func MapsLine(line []byte) (m Mapping, perms []byte, off uint64, ok bool) {
	f := bytes.Fields(line)
	if len(f) < 5 {
		return Mapping{}, nil, 0, false
	}
	lo, hi, cut := bytes.Cut(f[0], []byte("-"))
	if !cut {
		return Mapping{}, nil, 0, false
	}
	s, err1 := strconv.ParseUint(string(lo), 16, 64)
	e, err2 := strconv.ParseUint(string(hi), 16, 64)
	if err1 != nil || err2 != nil || s >= e {
		return Mapping{}, nil, 0, false
	}
	off, _ = strconv.ParseUint(string(f[2]), 16, 64)
	m = Mapping{Start: s, End: e}
	if len(f) >= 6 {
		m.Path = string(bytes.Join(f[5:], []byte(" ")))
	}
	return m, f[1], off, true
}

// ParseSmaps reads the mappings of a /proc/PID/smaps file. A line it does
// not know is skipped; a mapping without an Rss (Anonymous) line has RSS
// (Anon) 0.
func ParseSmaps(r io.Reader) ([]Mapping, error) {
	var out []Mapping
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Bytes()
		if k, v, ok := bytes.Cut(l, []byte(":")); ok && len(k) > 0 && !bytes.ContainsAny(k, " -") {
			if (string(k) == "Rss" || string(k) == "Anonymous") && len(out) > 0 {
				if f := bytes.Fields(v); len(f) >= 1 {
					if n, err := strconv.ParseUint(string(f[0]), 10, 64); err == nil {
						if string(k) == "Rss" {
							out[len(out)-1].RSS = n << 10
						} else {
							out[len(out)-1].Anon = n << 10
						}
					}
				}
			}
			continue
		}
		if m, _, _, ok := MapsLine(l); ok {
			out = append(out, m)
		}
	}
	return out, sc.Err()
}
