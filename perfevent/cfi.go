package perfevent

import (
	"encoding/binary"
	"errors"
)

// This file reads the call frame information (CFI) of an ELF object: its
// .eh_frame section (the DWARF call frame format as the ABI's unwinder
// uses it, .eh_frame flavour: CIE id 0, pointer encodings) and the
// .eh_frame_hdr search table that finds the FDE of an address. It answers
// one question: at a given address of a function, where is the caller's
// frame (the CFA), its return address and the registers it saved. Pure Go:
// it works on bytes and addresses, and is fuzzed (FuzzFrameRule).

// DWARF register numbers on x86-64.
const (
	dwRBP = 6
	dwRSP = 7
	dwRA  = 16 // the return address column
	nRegs = 17
)

// How a caller's register is recovered in a row of the CFI table.
const (
	ruleSame      = iota // unchanged (callee-saved and untouched), or unspecified
	ruleUndefined        // not recoverable
	ruleOffset           // saved at CFA+off
	ruleValOffset        // its value is CFA+off
	ruleRegister         // in register off
)

// regRule is the rule of one register in a row.
type regRule struct {
	kind uint8
	off  int64
}

// frameRule is the row of the CFI table for one address: the CFA is
// register cfaReg plus cfaOff, and each register is recovered by its rule.
type frameRule struct {
	cfaReg uint8
	cfaOff int64
	regs   [nRegs]regRule
	// signal says the FDE's CIE has the 'S' augmentation (a signal
	// trampoline): not unwound through.
	signal bool
}

var (
	errCFI       = errors.New("perfevent: malformed call frame information")
	errNoFDE     = errors.New("perfevent: no FDE covers the address")
	errShortData = errors.New("perfevent: call frame information truncated")
)

// ehFrame is the CFI of one ELF object, in the object's own (unbiased)
// addresses.
type ehFrame struct {
	data []byte // .eh_frame
	addr uint64 // its address
	// table is the .eh_frame_hdr search table: pairs of int32 (function
	// start, FDE address), relative to hdrAddr, sorted by function start.
	table   []byte
	hdrAddr uint64
}

// reader decodes DWARF values from a byte slice; an overrun sets err and
// returns zeros, so a malformed input ends the parse rather than panicking.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) need(n int) bool {
	if r.err != nil || n < 0 || r.off+n > len(r.b) || r.off+n < r.off {
		if r.err == nil {
			r.err = errShortData
		}
		return false
	}
	return true
}

func (r *reader) u8() uint8 {
	if !r.need(1) {
		return 0
	}
	v := r.b[r.off]
	r.off++
	return v
}

func (r *reader) u16() uint16 {
	if !r.need(2) {
		return 0
	}
	v := binary.LittleEndian.Uint16(r.b[r.off:])
	r.off += 2
	return v
}

func (r *reader) u32() uint32 {
	if !r.need(4) {
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v
}

func (r *reader) u64() uint64 {
	if !r.need(8) {
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b[r.off:])
	r.off += 8
	return v
}

func (r *reader) uleb() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		c := r.u8()
		if r.err != nil {
			return 0
		}
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		if c&0x80 == 0 {
			return v
		}
	}
}

func (r *reader) sleb() int64 {
	var v int64
	shift := uint(0)
	for {
		c := r.u8()
		if r.err != nil {
			return 0
		}
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
}

func (r *reader) skip(n uint64) {
	if n > uint64(len(r.b)) || !r.need(int(n)) {
		r.err = errShortData
		return
	}
	r.off += int(n)
}

// Pointer encodings (DW_EH_PE_*).
const (
	peAbsptr  = 0x00
	peUleb    = 0x01
	peUdata2  = 0x02
	peUdata4  = 0x03
	peUdata8  = 0x04
	peSleb    = 0x09
	peSdata2  = 0x0a
	peSdata4  = 0x0b
	peSdata8  = 0x0c
	pePcrel   = 0x10
	peDatarel = 0x30
	peOmit    = 0xff
)

// ptr reads a pointer in encoding enc; base is the address of r.b[0]
// (for pc-relative values), datarel the base of data-relative ones.
func (r *reader) ptr(enc uint8, base, datarel uint64) uint64 {
	if enc == peOmit {
		return 0
	}
	at := base + uint64(r.off)
	var v uint64
	switch enc & 0x0f {
	case peAbsptr, peUdata8, peSdata8:
		v = r.u64()
	case peUleb:
		v = r.uleb()
	case peUdata2:
		v = uint64(r.u16())
	case peUdata4:
		v = uint64(r.u32())
	case peSleb:
		v = uint64(r.sleb())
	case peSdata2:
		v = uint64(int64(int16(r.u16())))
	case peSdata4:
		v = uint64(int64(int32(r.u32())))
	default:
		r.err = errCFI
		return 0
	}
	switch enc & 0x70 {
	case 0:
	case pePcrel:
		v += at
	case peDatarel:
		v += datarel
	default:
		r.err = errCFI // textrel, funcrel, aligned: not used on x86-64 Linux
	}
	return v
}

// cie is what a CIE contributes to its FDEs.
type cie struct {
	codeAlign uint64
	dataAlign int64
	raReg     uint64
	fdeEnc    uint8
	hasAug    bool // 'z': FDEs carry an augmentation length
	signal    bool
	initial   []byte
}

// entry reads the CIE or FDE at offset off of the section: its body (after
// the length) and the offset of the next entry.
func (e *ehFrame) entry(off uint64) (body []byte, bodyOff uint64, err error) {
	if off+4 > uint64(len(e.data)) {
		return nil, 0, errShortData
	}
	n := uint64(binary.LittleEndian.Uint32(e.data[off:]))
	bodyOff = off + 4
	if n == 0xffffffff {
		if off+12 > uint64(len(e.data)) {
			return nil, 0, errShortData
		}
		n = binary.LittleEndian.Uint64(e.data[off+4:])
		bodyOff = off + 12
	}
	if n == 0 || n > uint64(len(e.data))-bodyOff {
		return nil, 0, errShortData
	}
	return e.data[bodyOff : bodyOff+n], bodyOff, nil
}

func (e *ehFrame) parseCIE(off uint64) (*cie, error) {
	body, bodyOff, err := e.entry(off)
	if err != nil {
		return nil, err
	}
	r := &reader{b: body}
	if id := r.u32(); id != 0 {
		return nil, errCFI
	}
	c := &cie{fdeEnc: peAbsptr}
	version := r.u8()
	var aug []byte
	for {
		ch := r.u8()
		if r.err != nil {
			return nil, r.err
		}
		if ch == 0 {
			break
		}
		aug = append(aug, ch)
	}
	if len(aug) >= 2 && aug[0] == 'e' && aug[1] == 'h' {
		r.u64() // the old GNU eh_data pointer
		aug = aug[2:]
	}
	c.codeAlign = r.uleb()
	c.dataAlign = r.sleb()
	if version == 1 {
		c.raReg = uint64(r.u8())
	} else {
		c.raReg = r.uleb()
	}
	if len(aug) > 0 && aug[0] == 'z' {
		c.hasAug = true
		n := r.uleb()
		end := uint64(r.off) + n
		for _, ch := range aug[1:] {
			switch ch {
			case 'L':
				r.u8()
			case 'R':
				c.fdeEnc = r.u8()
			case 'P':
				enc := r.u8()
				r.ptr(enc&^0x80, e.addr+bodyOff, 0)
			case 'S':
				c.signal = true
			case 'B', 'G':
			default:
				// Unknown augmentation: the length lets us skip its data.
			}
		}
		if r.err != nil || end > uint64(len(body)) {
			return nil, errCFI
		}
		r.off = int(end)
	} else {
		for _, ch := range aug {
			if ch == 'S' {
				c.signal = true
			}
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	c.initial = body[r.off:]
	return c, nil
}

// findFDE returns the section offset of the FDE that covers pc, from the
// search table.
func (e *ehFrame) findFDE(pc uint64) (uint64, bool) {
	n := len(e.table) / 8
	lo, hi := 0, n
	for lo < hi { // first entry whose start > pc
		m := int(uint(lo+hi) >> 1)
		if e.hdrAddr+uint64(int64(int32(binary.LittleEndian.Uint32(e.table[8*m:])))) <= pc {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return 0, false
	}
	fde := e.hdrAddr + uint64(int64(int32(binary.LittleEndian.Uint32(e.table[8*(lo-1)+4:]))))
	if fde < e.addr || fde-e.addr >= uint64(len(e.data)) {
		return 0, false
	}
	return fde - e.addr, true
}

// rule computes the CFI row for pc (an address in the object's own
// addresses).
func (e *ehFrame) rule(pc uint64) (frameRule, error) {
	var fr frameRule
	off, ok := e.findFDE(pc)
	if !ok {
		return fr, errNoFDE
	}
	body, bodyOff, err := e.entry(off)
	if err != nil {
		return fr, err
	}
	r := &reader{b: body}
	ciePtr := uint64(r.u32())
	if ciePtr == 0 || ciePtr > bodyOff {
		return fr, errCFI
	}
	c, err := e.parseCIE(bodyOff - ciePtr)
	if err != nil {
		return fr, err
	}
	base := e.addr + bodyOff
	start := r.ptr(c.fdeEnc, base, 0)
	length := r.ptr(c.fdeEnc&0x0f, base, 0)
	if c.hasAug {
		r.skip(r.uleb())
	}
	if r.err != nil {
		return fr, r.err
	}
	if pc < start || pc-start >= length {
		return fr, errNoFDE
	}
	var init frameRule
	if err := c.run(&init, nil, c.initial, ^uint64(0), 0, base); err != nil {
		return fr, err
	}
	fr = init
	fr.signal = c.signal
	if err := c.run(&fr, &init, body[r.off:], pc, start, base); err != nil {
		return fr, err
	}
	return fr, nil
}

// run executes the CFA instructions ins on fr, for the row of address pc
// in a function starting at loc (init: the CIE's row, for restore).
func (c *cie) run(fr, init *frameRule, ins []byte, pc, loc uint64, base uint64) error {
	r := &reader{b: ins}
	var stack []frameRule
	setReg := func(reg uint64, k uint8, off int64) {
		if reg < nRegs {
			fr.regs[reg] = regRule{kind: k, off: off}
		}
	}
	restore := func(reg uint64) {
		if reg < nRegs {
			if init != nil {
				fr.regs[reg] = init.regs[reg]
			} else {
				fr.regs[reg] = regRule{}
			}
		}
	}
	advance := func(d uint64) bool {
		loc += d * c.codeAlign
		return loc > pc
	}
	for r.off < len(r.b) && r.err == nil {
		op := r.u8()
		switch op >> 6 {
		case 1: // DW_CFA_advance_loc
			if advance(uint64(op & 0x3f)) {
				return nil
			}
			continue
		case 2: // DW_CFA_offset
			setReg(uint64(op&0x3f), ruleOffset, int64(r.uleb())*c.dataAlign)
			continue
		case 3: // DW_CFA_restore
			restore(uint64(op & 0x3f))
			continue
		}
		switch op {
		case 0x00: // nop
		case 0x01: // set_loc
			loc = r.ptr(c.fdeEnc, base, 0)
			if loc > pc {
				return nil
			}
		case 0x02:
			if advance(uint64(r.u8())) {
				return nil
			}
		case 0x03:
			if advance(uint64(r.u16())) {
				return nil
			}
		case 0x04:
			if advance(uint64(r.u32())) {
				return nil
			}
		case 0x05: // offset_extended
			reg := r.uleb()
			setReg(reg, ruleOffset, int64(r.uleb())*c.dataAlign)
		case 0x06: // restore_extended
			restore(r.uleb())
		case 0x07: // undefined
			setReg(r.uleb(), ruleUndefined, 0)
		case 0x08: // same_value
			setReg(r.uleb(), ruleSame, 0)
		case 0x09: // register
			reg := r.uleb()
			setReg(reg, ruleRegister, int64(r.uleb()))
		case 0x0a: // remember_state
			if len(stack) > 64 {
				return errCFI
			}
			stack = append(stack, *fr)
		case 0x0b: // restore_state
			if len(stack) == 0 {
				return errCFI
			}
			*fr = stack[len(stack)-1]
			stack = stack[:len(stack)-1]
		case 0x0c: // def_cfa
			reg := r.uleb()
			fr.cfaReg, fr.cfaOff = cfaReg(reg), int64(r.uleb())
		case 0x0d: // def_cfa_register
			fr.cfaReg = cfaReg(r.uleb())
		case 0x0e: // def_cfa_offset
			fr.cfaOff = int64(r.uleb())
		case 0x0f: // def_cfa_expression
			r.skip(r.uleb())
			fr.cfaReg = cfaExpr
		case 0x10: // expression
			reg := r.uleb()
			r.skip(r.uleb())
			setReg(reg, ruleUndefined, 0)
		case 0x11: // offset_extended_sf
			reg := r.uleb()
			setReg(reg, ruleOffset, r.sleb()*c.dataAlign)
		case 0x12: // def_cfa_sf
			reg := r.uleb()
			fr.cfaReg, fr.cfaOff = cfaReg(reg), r.sleb()*c.dataAlign
		case 0x13: // def_cfa_offset_sf
			fr.cfaOff = r.sleb() * c.dataAlign
		case 0x14: // val_offset
			reg := r.uleb()
			setReg(reg, ruleValOffset, int64(r.uleb())*c.dataAlign)
		case 0x15: // val_offset_sf
			reg := r.uleb()
			setReg(reg, ruleValOffset, r.sleb()*c.dataAlign)
		case 0x16: // val_expression
			reg := r.uleb()
			r.skip(r.uleb())
			setReg(reg, ruleUndefined, 0)
		case 0x2e: // GNU_args_size
			r.uleb()
		case 0x2f: // GNU_negative_offset_extended
			reg := r.uleb()
			setReg(reg, ruleOffset, -int64(r.uleb())*c.dataAlign)
		default:
			return errCFI
		}
	}
	if r.err != nil {
		return r.err
	}
	return nil
}

// cfaExpr marks a CFA given by an expression (not followed).
const cfaExpr = 0xff

func cfaReg(reg uint64) uint8 {
	if reg >= nRegs {
		return cfaExpr
	}
	return uint8(reg)
}

// newEHFrame checks the .eh_frame_hdr at hdrAddr (hdr its bytes) and
// returns the CFI it indexes; frame holds the .eh_frame section, at
// frameAddr.
func newEHFrame(hdr []byte, hdrAddr uint64, frame []byte, frameAddr uint64) (*ehFrame, error) {
	r := &reader{b: hdr}
	if v := r.u8(); v != 1 {
		return nil, errCFI
	}
	ptrEnc, countEnc, tableEnc := r.u8(), r.u8(), r.u8()
	r.ptr(ptrEnc, hdrAddr, hdrAddr)
	count := r.ptr(countEnc, hdrAddr, hdrAddr)
	if r.err != nil {
		return nil, r.err
	}
	// datarel|sdata4, the only table encoding the GNU linkers write.
	if tableEnc != peDatarel|peSdata4 || count > uint64(len(hdr)-r.off)/8 {
		return nil, errCFI
	}
	return &ehFrame{data: frame, addr: frameAddr, table: hdr[r.off : r.off+int(count)*8], hdrAddr: hdrAddr}, nil
}
