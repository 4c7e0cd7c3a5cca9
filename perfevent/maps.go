//go:build linux && amd64

package perfevent

import (
	"bufio"
	"bytes"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/clrprof/clrprof/internal/procstat"
)

// execMap holds the process's executable mappings (/proc/self/maps), to
// tell a code address from a value a broken frame-pointer chain produced
// (a frame that used rbp for something else, a signal frame): the chain is
// cut at the first address outside them, so a Sample never carries an
// address that is not code, and a consumer may hand every address to a
// runtime's code lookup. The unwinder also finds there the file a code
// address belongs to, for its call frame information.
type execMap struct {
	path   string // the maps file; /proc/self/maps when empty
	ranges []mapping
	loaded time.Time
	// seen caches the answer for addresses already checked (call chains
	// repeat the same return addresses), until the next reload.
	seen map[uint64]int
}

// mapping is one executable mapping, [lo, hi), of file at offset off.
type mapping struct {
	lo, hi, off uint64
	file        string // "" for anonymous memory (JIT-compiled code)
	// The unwinder's: the file's call frame information (nil: none) and
	// what the mapping adds to its addresses, once resolved.
	resolved bool
	obj      *objCFI
	bias     uint64
}

// reloadEvery bounds how often an unknown address rereads the mappings
// (code is mapped as the JIT needs it; a chain through code mapped since
// the last reading is cut until the next: broken chains bring unknown
// values all the time, and reading a runtime's mappings costs about a
// millisecond).
const reloadEvery = 250 * time.Millisecond

func (m *execMap) load() {
	m.loaded = time.Now()
	clear(m.seen)
	p := m.path
	if p == "" {
		p = "/proc/self/maps"
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return
	}
	m.ranges = parseMaps(b)
}

// parseMaps returns the executable mappings of a maps file, sorted.
func parseMaps(b []byte) []mapping {
	var rs []mapping
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		m, perms, off, ok := procstat.MapsLine(sc.Bytes())
		if !ok || len(perms) < 3 || perms[2] != 'x' {
			continue
		}
		mp := mapping{lo: m.Start, hi: m.End}
		if strings.HasPrefix(m.Path, "/") {
			mp.off, mp.file = off, m.Path
		}
		rs = append(rs, mp)
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].lo < rs[j].lo })
	return rs
}

func (m *execMap) find(a uint64) int {
	i := sort.Search(len(m.ranges), func(i int) bool { return m.ranges[i].hi > a })
	if i < len(m.ranges) && m.ranges[i].lo <= a {
		return i
	}
	return -1
}

// lookup returns the mapping that holds a (nil: not code), rereading the
// mappings (at most every reloadEvery) for an address not found.
func (m *execMap) lookup(a uint64) *mapping {
	i, hit := m.seen[a]
	if !hit {
		i = m.find(a)
		if i < 0 && time.Since(m.loaded) >= reloadEvery {
			m.load()
			i = m.find(a)
		}
		if m.seen == nil || len(m.seen) >= 1<<16 {
			m.seen = make(map[uint64]int)
		}
		m.seen[a] = i
	}
	if i < 0 {
		return nil
	}
	return &m.ranges[i]
}

// add records a new executable mapping (reported by the kernel as it was
// made), replacing those it overlaps.
func (m *execMap) add(mp mapping) {
	if mp.lo >= mp.hi {
		return
	}
	if i := m.find(mp.lo); i >= 0 {
		if r := m.ranges[i]; r.lo == mp.lo && r.hi == mp.hi && r.off == mp.off && r.file == mp.file {
			return
		}
	}
	// In place: most new mappings overlap nothing (a JIT's next code
	// block), and rebuilding the list for each would churn memory.
	out := m.ranges[:0]
	for _, r := range m.ranges {
		if r.hi <= mp.lo || r.lo >= mp.hi {
			out = append(out, r)
		}
	}
	i := sort.Search(len(out), func(i int) bool { return out[i].lo > mp.lo })
	m.ranges = slices.Insert(out, i, mp)
	clear(m.seen)
}

// contains says whether a lies in an executable mapping.
func (m *execMap) contains(a uint64) bool { return m.lookup(a) != nil }
