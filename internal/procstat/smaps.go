package procstat

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
)

// A Mapping is one mapping of /proc/PID/smaps: its address range, the
// file it maps ("" for anonymous memory; names such as "[heap]" as the
// kernel writes them) and how much of it is resident.
type Mapping struct {
	Start, End uint64
	Path       string
	RSS        uint64 // bytes
}

// ParseSmaps reads the mappings of a /proc/PID/smaps file. A line it does
// not know is skipped; a mapping without an Rss line has RSS 0.
func ParseSmaps(r io.Reader) ([]Mapping, error) {
	var out []Mapping
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Bytes()
		if k, v, ok := bytes.Cut(l, []byte(":")); ok && len(k) > 0 && !bytes.ContainsAny(k, " -") {
			if string(k) == "Rss" && len(out) > 0 {
				f := bytes.Fields(v)
				if len(f) >= 1 {
					if n, err := strconv.ParseUint(string(f[0]), 10, 64); err == nil {
						out[len(out)-1].RSS = n << 10
					}
				}
			}
			continue
		}
		f := bytes.Fields(l)
		if len(f) < 5 {
			continue
		}
		lo, hi, ok := bytes.Cut(f[0], []byte("-"))
		if !ok {
			continue
		}
		s, err1 := strconv.ParseUint(string(lo), 16, 64)
		e, err2 := strconv.ParseUint(string(hi), 16, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		m := Mapping{Start: s, End: e}
		if len(f) >= 6 {
			// The path is the rest of the line after the inode (it may
			// hold spaces).
			if i := bytes.Index(l, f[5]); i >= 0 {
				m.Path = string(bytes.TrimSpace(l[i:]))
			}
		}
		out = append(out, m)
	}
	return out, sc.Err()
}
