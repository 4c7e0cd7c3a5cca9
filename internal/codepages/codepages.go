//go:build linux

// Package codepages gives back to the kernel the resident pages of a
// shared library's read-only mappings (its code and constants) that still
// hold the file's own bytes, so that the process's RSS counts only what
// is used again afterwards.
//
// A Go library touches much of itself once while it starts (the Go
// runtime's start-up walks its function table, every package's init runs,
// the dynamic loader reads the relocation table), and with the kernel's
// fault-around each touch maps up to 16 neighbouring pages. Those pages
// stay mapped, and counted in the process's RSS, for as long as the
// process lives. Dropping them (madvise MADV_DONTNEED) leaves them in the
// page cache: the next use of one is a minor fault that maps it again, with
// the file's contents.
//
// Only pages that /proc/self/pagemap reports present and backed by the
// file are dropped. A page of a private mapping that was ever written (a
// copy-on-write copy: relocated data, or a debugger's breakpoint) is
// anonymous there and is kept, so nothing written is ever lost. Writable
// mappings are not looked at.
package codepages

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/clrprof/clrprof/internal/procstat"
)

// Result is what Release did.
type Result struct {
	Path     string // the library's file, as /proc/self/maps names it
	Mappings int    // its read-only mappings looked at
	Resident int64  // bytes of them resident before (file-backed and copied)
	Released int64  // bytes given back
	Kept     int64  // resident bytes kept: pages written since mapping
}

const (
	pmPresent    = 1 << 63
	pmFile       = 1 << 61 // file page or shared anonymous
	madvDontneed = 4
)

// Release drops the file-backed resident pages of the read-only mappings
// of the file that maps pc (an address of code in the library). It reads
// /proc/self/maps and /proc/self/pagemap; where either cannot be read it
// returns an error and drops nothing.
func Release(pc uintptr) (Result, error) {
	var r Result
	maps, err := os.Open("/proc/self/maps")
	if err != nil {
		return r, err
	}
	// The process's mappings, and which are writable.
	type mapping struct {
		procstat.Mapping
		writable bool
	}
	var all []mapping
	sc := bufio.NewScanner(maps)
	sc.Buffer(make([]byte, 4096), 1<<20)
	for sc.Scan() {
		m, perms, _, ok := procstat.MapsLine(sc.Bytes())
		if !ok || len(perms) < 2 {
			continue
		}
		all = append(all, mapping{m, perms[1] == 'w'})
		if uint64(pc) >= m.Start && uint64(pc) < m.End {
			r.Path = m.Path
		}
	}
	maps.Close()
	if err := sc.Err(); err != nil {
		return r, err
	}
	if len(r.Path) == 0 || r.Path[0] != '/' {
		return r, fmt.Errorf("codepages: %#x is not in a file's mapping (%q)", pc, r.Path)
	}
	pm, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return r, err
	}
	defer pm.Close()
	page := uint64(os.Getpagesize())
	var buf []byte
	for _, m := range all {
		if m.Path != r.Path || m.writable {
			continue
		}
		r.Mappings++
		n := (m.End - m.Start) / page
		if cap(buf) < int(n*8) {
			buf = make([]byte, n*8)
		}
		buf = buf[:n*8]
		if _, err := pm.ReadAt(buf, int64(m.Start/page*8)); err != nil {
			return r, fmt.Errorf("codepages: reading pagemap: %w", err)
		}
		// Runs of present file pages, dropped one run at a time; run is
		// the current run's start (0: none).
		run := uint64(0)
		drop := func(end uint64) error {
			if run == 0 {
				return nil
			}
			start := run
			run = 0
			if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, uintptr(start), uintptr(end-start), madvDontneed); e != 0 {
				return fmt.Errorf("codepages: madvise: %w", e)
			}
			r.Released += int64(end - start)
			return nil
		}
		for i := uint64(0); i < n; i++ {
			e := binary.LittleEndian.Uint64(buf[i*8:])
			addr := m.Start + i*page
			switch {
			case e&pmPresent == 0:
			case e&pmFile != 0:
				r.Resident += int64(page)
				if run == 0 {
					run = addr
				}
				continue
			default: // present and anonymous: written since it was mapped
				r.Resident += int64(page)
				r.Kept += int64(page)
			}
			if err := drop(addr); err != nil {
				return r, err
			}
		}
		if err := drop(m.End); err != nil {
			return r, err
		}
	}
	if r.Mappings == 0 {
		return r, errors.New("codepages: no read-only mapping of " + r.Path)
	}
	return r, nil
}
