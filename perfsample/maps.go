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
}

// reloadEvery bounds how often an unknown address rereads the mappings
// (code is mapped as the JIT needs it).
const reloadEvery = 50 * time.Millisecond

func (m *execMap) load() {
	m.loaded = time.Now()
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
	if m.find(a) {
		return true
	}
	if time.Since(m.loaded) < reloadEvery {
		return false
	}
	m.load()
	return m.find(a)
}
