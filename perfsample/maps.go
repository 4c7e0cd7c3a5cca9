//go:build linux && amd64

package perfsample

import (
	"bufio"
	"bytes"
	"os"
	"sort"
	"strconv"
	"time"
)

// execMap holds the process's executable mappings (/proc/self/maps), to
// tell a code address from a value a broken frame-pointer chain produced
// (a frame that used rbp for something else, a signal frame): the chain is
// cut at the first address outside them, so a Sample never carries an
// address that is not code, and a consumer may hand every address to a
// runtime's code lookup.
type execMap struct {
	ranges [][2]uint64 // sorted, [start, end)
	loaded time.Time
	// seen caches the answer for addresses already checked (call chains
	// repeat the same return addresses), until the next reload.
	seen map[uint64]bool
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
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	var rs [][2]uint64
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) < 2 || len(f[1]) < 3 || f[1][2] != 'x' {
			continue
		}
		lo, hi, ok := bytes.Cut(f[0], []byte("-"))
		if !ok {
			continue
		}
		a, err1 := strconv.ParseUint(string(lo), 16, 64)
		z, err2 := strconv.ParseUint(string(hi), 16, 64)
		if err1 == nil && err2 == nil && a < z {
			rs = append(rs, [2]uint64{a, z})
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i][0] < rs[j][0] })
	m.ranges = rs
}

func (m *execMap) find(a uint64) bool {
	i := sort.Search(len(m.ranges), func(i int) bool { return m.ranges[i][1] > a })
	return i < len(m.ranges) && m.ranges[i][0] <= a
}

// contains says whether a lies in an executable mapping, rereading the
// mappings (at most every reloadEvery) for an address not found.
func (m *execMap) contains(a uint64) bool {
	if ok, hit := m.seen[a]; hit {
		return ok
	}
	ok := m.find(a)
	if !ok && time.Since(m.loaded) >= reloadEvery {
		m.load()
		ok = m.find(a)
	}
	if m.seen == nil || len(m.seen) >= 1<<16 {
		m.seen = make(map[uint64]bool)
	}
	m.seen[a] = ok
	return ok
}
