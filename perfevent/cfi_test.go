package perfevent

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// cfiBuilder writes a small .eh_frame and its .eh_frame_hdr by hand: one
// CIE ("zR", pc-relative sdata4 pointers, code alignment 1, data alignment
// -8, return address column 16, initial row CFA=rsp+8, RA at CFA-8) and one
// FDE per function.
type cfiBuilder struct {
	frame     []byte
	frameAddr uint64
	fdes      [][2]uint64 // function start, FDE address
}

func (b *cfiBuilder) u32(v uint32) { b.frame = binary.LittleEndian.AppendUint32(b.frame, v) }

func (b *cfiBuilder) cie() {
	body := []byte{0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78 /* -8 */, 16, 1, pePcrel | peSdata4,
		0x0c, dwRSP, 8, // def_cfa rsp+8
		0x80 | dwRA, 1, // offset RA at CFA-8
	}
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	b.u32(uint32(len(body)))
	b.frame = append(b.frame, body...)
}

// fde adds a function [start, start+size) with CFA instructions ins.
func (b *cfiBuilder) fde(start, size uint64, ins ...byte) {
	at := uint64(len(b.frame))
	b.fdes = append(b.fdes, [2]uint64{start, b.frameAddr + at})
	body := binary.LittleEndian.AppendUint32(nil, uint32(at+4)) // back to the CIE at 0
	pcField := b.frameAddr + at + 8
	body = binary.LittleEndian.AppendUint32(body, uint32(int32(int64(start)-int64(pcField))))
	body = binary.LittleEndian.AppendUint32(body, uint32(size))
	body = append(body, 0) // augmentation length
	body = append(body, ins...)
	for (len(body)+4)%8 != 0 {
		body = append(body, 0)
	}
	b.u32(uint32(len(body)))
	b.frame = append(b.frame, body...)
}

// hdr writes the .eh_frame_hdr for an address hdrAddr.
func (b *cfiBuilder) hdr(hdrAddr uint64) []byte {
	h := []byte{1, pePcrel | peSdata4, peUdata4, peDatarel | peSdata4}
	h = binary.LittleEndian.AppendUint32(h, uint32(int32(int64(b.frameAddr)-int64(hdrAddr+4))))
	h = binary.LittleEndian.AppendUint32(h, uint32(len(b.fdes)))
	for _, f := range b.fdes {
		h = binary.LittleEndian.AppendUint32(h, uint32(int32(int64(f[0])-int64(hdrAddr))))
		h = binary.LittleEndian.AppendUint32(h, uint32(int32(int64(f[1])-int64(hdrAddr))))
	}
	return h
}

func sampleCFI() (hdr []byte, frame []byte) {
	b := &cfiBuilder{frameAddr: 0x2000}
	b.cie()
	// A function with an rbp frame and an epilogue in the middle:
	// 0x3000 push rbp; 0x3001 mov rbp,rsp; ... 0x3010 leave/ret on one
	// path, the rest of the body after it.
	b.fde(0x3000, 0x40,
		0x41,     // advance 1
		0x0e, 16, // def_cfa_offset 16
		0x80|dwRBP, 2, // rbp at CFA-16
		0x43,        // advance 3
		0x0d, dwRBP, // def_cfa_register rbp
		0x0a,           // remember_state
		0x4c,           // advance 12 (0x3010)
		0x0c, dwRSP, 8, // def_cfa rsp+8
		0xc0|dwRBP, // restore rbp
		0x41,       // advance 1 (0x3011)
		0x0b,       // restore_state
	)
	// A leaf that allocates a frame with sub rsp, 0x1f48 (advance_loc2).
	b.fde(0x3100, 0x2000,
		0x03, 7, 0, // advance 7
		0x0e, 0xc8, 0x3e, // def_cfa_offset 8008 (uleb)
		0x03, 0x00, 0x10, // advance 0x1000
		0x2f, 3, 2, // GNU_negative_offset_extended rbx: CFA+16
	)
	return b.hdr(0x1000), b.frame
}

// The rows of a hand-written CFI table at each step of its instructions.
func TestFrameRuleRows(t *testing.T) {
	hdr, frame := sampleCFI()
	e, err := newEHFrame(hdr, 0x1000, frame, 0x2000)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		pc     uint64
		reg    uint8
		off    int64
		rbp    regRule
		rbxOff int64
	}
	for _, w := range []row{
		{0x3000, dwRSP, 8, regRule{}, 0},
		{0x3001, dwRSP, 16, regRule{ruleOffset, -16}, 0},
		{0x3003, dwRSP, 16, regRule{ruleOffset, -16}, 0},
		{0x3004, dwRBP, 16, regRule{ruleOffset, -16}, 0},
		{0x300f, dwRBP, 16, regRule{ruleOffset, -16}, 0},
		{0x3010, dwRSP, 8, regRule{}, 0},
		{0x3011, dwRBP, 16, regRule{ruleOffset, -16}, 0},
		{0x303f, dwRBP, 16, regRule{ruleOffset, -16}, 0},
		{0x3100, dwRSP, 8, regRule{}, 0},
		{0x3107, dwRSP, 8008, regRule{}, 0},
		{0x4107, dwRSP, 8008, regRule{}, 16},
	} {
		fr, err := e.rule(w.pc)
		if err != nil {
			t.Errorf("%#x: %v", w.pc, err)
			continue
		}
		if fr.cfaReg != w.reg || fr.cfaOff != w.off || fr.regs[dwRBP] != w.rbp || fr.regs[dwRA] != (regRule{ruleOffset, -8}) || fr.regs[3].off != w.rbxOff {
			t.Errorf("%#x: CFA r%d%+d, rbp %+v, RA %+v, rbx %+v; want r%d%+d, rbp %+v, RA at CFA-8, rbx %+d", w.pc, fr.cfaReg, fr.cfaOff, fr.regs[dwRBP], fr.regs[dwRA], fr.regs[3], w.reg, w.off, w.rbp, w.rbxOff)
		}
	}
	for _, pc := range []uint64{0x2fff, 0x3040, 0x30ff, 0x5100} {
		if _, err := e.rule(pc); err != errNoFDE {
			t.Errorf("%#x: %v, want no FDE", pc, err)
		}
	}
}

// systemLibs are real shared objects with CFI to read: the C library and,
// when installed, CoreCLR's runtime and JIT.
func systemLibs() []string {
	var out []string
	for _, g := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
		os.Getenv("HOME") + "/.cache/clrprof/runtimes/*/shared/Microsoft.NETCore.App/*/libcoreclr.so",
		os.Getenv("HOME") + "/.cache/clrprof/runtimes/*/shared/Microsoft.NETCore.App/*/libclrjit.so"} {
		m, _ := filepath.Glob(g)
		out = append(out, m...)
	}
	return out
}

// At the first instruction of a function, the return address is at the
// stack pointer: the row there must say CFA=rsp+8, RA at CFA-8. Every FDE
// of the C library, the C++ library and the installed runtimes is read
// (tens of thousands), and rows inside each are computed without an error;
// the entry rule is checked at every FDE that starts at a function the
// library exports (the other FDEs include PLTs and the cold parts of
// functions split by the compiler, which start mid-frame).
func TestFrameRuleRealLibraries(t *testing.T) {
	libs := systemLibs()
	if len(libs) == 0 {
		t.Skip("no shared libraries to read")
	}
	for _, lib := range libs {
		o := loadCFI(lib)
		if o == nil {
			t.Errorf("%s: no CFI read", lib)
			continue
		}
		exported := map[uint64]bool{}
		if f, err := elf.Open(lib); err == nil {
			syms, _ := f.DynamicSymbols()
			for _, s := range syms {
				if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
					exported[s.Value] = true
				}
			}
			f.Close()
		}
		n, entries, failed, wrongEntry, rows := 0, 0, 0, 0, 0
		for i := 0; i+8 <= len(o.eh.table); i += 8 {
			start := o.eh.hdrAddr + uint64(int64(int32(binary.LittleEndian.Uint32(o.eh.table[i:]))))
			n++
			fr, err := o.eh.rule(start)
			if err != nil {
				failed++
				continue
			}
			if exported[start] {
				entries++
				if fr.cfaReg != dwRSP || fr.cfaOff != 8 || fr.regs[dwRA] != (regRule{ruleOffset, -8}) {
					wrongEntry++
				}
			}
			for d := uint64(1); d < 64; d += 7 {
				if _, err := o.eh.rule(start + d); err != nil && err != errNoFDE {
					failed++
					break
				}
				rows++
			}
		}
		t.Logf("%s: %d FDEs (%d at exported functions: %d without the entry rule), %d more rows, %d failed", lib, n, entries, wrongEntry, rows, failed)
		if n < 100 || failed > 0 || wrongEntry > 0 {
			t.Errorf("%s: %d of %d FDEs failed, %d of %d exported entries without CFA=rsp+8", lib, failed, n, wrongEntry, entries)
		}
	}
}

// Arbitrary bytes as the CFI table and its index never panic, and a row
// found names a register the unwinder can read or the expression marker.
func FuzzFrameRule(f *testing.F) {
	hdr, frame := sampleCFI()
	for _, pc := range []uint64{0x3000, 0x3004, 0x3011, 0x4107} {
		f.Add(hdr, frame, pc)
	}
	f.Add([]byte{1, 0x1b, 3, 0x3b, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0x20, 0, 0, 0, 0x10, 0, 0}, []byte{8, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0x78}, uint64(0x3000))
	if elfFile, err := elf.Open("/bin/sh"); err == nil {
		if s := elfFile.Section(".eh_frame_hdr"); s != nil {
			if h, err := s.Data(); err == nil && len(h) > 64 {
				f.Add(h[:64], frame, uint64(s.Addr))
			}
		}
		elfFile.Close()
	}
	f.Fuzz(func(t *testing.T, hdr, frame []byte, pc uint64) {
		e, err := newEHFrame(hdr, 0x1000, frame, 0x2000)
		if err != nil {
			return
		}
		fr, err := e.rule(pc)
		if err == nil && fr.cfaReg != cfaExpr && fr.cfaReg >= nRegs {
			t.Fatalf("CFA register %d", fr.cfaReg)
		}
	})
}
