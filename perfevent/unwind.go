//go:build linux && amd64

package perfevent

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
	"os"
)

// This file unwinds a sampled thread's stack from its registers and a copy
// of the top of its stack (Options.StackBytes): through code that has call
// frame information (the shared libraries of a runtime and of the system:
// their .eh_frame) by that information, which stays right where the code
// keeps no frame pointer; through code without it (code a JIT compiled,
// stubs, Go) by the frame-pointer chain, as the kernel would.

// objCFI is the call frame information of one file, and the rows already
// computed (by address in the file).
type objCFI struct {
	eh   *ehFrame
	prog []*elf.Prog // its PT_LOAD segments, to place a mapping
	rows map[uint64]*cachedRule
}

type cachedRule struct {
	fr  frameRule
	err error
}

// unwinder holds what the unwinding needs across samples.
type unwinder struct {
	objs map[string]*objCFI // by file; nil: the file has no usable CFI
	sigs map[uint64]bool    // addresses known to be (or not) the signal trampoline
}

// resolve finds the CFI of a mapping's file and its bias, once.
func (u *unwinder) resolve(m *mapping) {
	m.resolved = true
	if m.file == "" {
		return
	}
	o, seen := u.objs[m.file]
	if !seen {
		o = loadCFI(m.file)
		if u.objs == nil {
			u.objs = map[string]*objCFI{}
		}
		u.objs[m.file] = o
	}
	if o != nil {
		if bias, ok := o.bias(m); ok {
			m.obj, m.bias = o, bias
		}
	}
}

// sigreturnCode is the x86-64 Linux signal trampoline (glibc's
// __restore_rt, musl's __restore_rt): mov $15, %rax (rt_sigreturn);
// syscall. A signal handler returns to it.
var sigreturnCode = []byte{0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05}

// sigreturn says whether pc, in mapping m, is the signal trampoline (read
// from the file once per address).
func (u *unwinder) sigreturn(m *mapping, pc uint64) bool {
	if ok, seen := u.sigs[pc]; seen {
		return ok
	}
	ok := false
	if m.file != "" {
		if f, err := os.Open(m.file); err == nil {
			b := make([]byte, len(sigreturnCode))
			if _, err := f.ReadAt(b, int64(pc-m.lo+m.off)); err == nil {
				ok = bytes.Equal(b, sigreturnCode)
			}
			f.Close()
		}
	}
	if u.sigs == nil {
		u.sigs = map[uint64]bool{}
	}
	u.sigs[pc] = ok
	return ok
}

// The general registers in a ucontext_t (x86-64 Linux: uc_flags, uc_link,
// uc_stack, then mcontext's gregs: r8–r15, rdi, rsi, rbp, rbx, rdx, rax,
// rcx, rsp, rip) and their DWARF numbers.
const ucGregs = 40

var gregDwarf = [...]int{8, 9, 10, 11, 12, 13, 14, 15, 5, 4, dwRBP, 3, 1, 0, 2, dwRSP, dwRA}

// sigFrame reads the interrupted registers of the signal frame whose
// ucontext is at uc.
func sigFrame(uc uint64, read func(uint64) (uint64, bool)) (regs [nRegs]uint64, valid [nRegs]bool, ok bool) {
	for i, d := range gregDwarf {
		v, ok := read(uc + ucGregs + 8*uint64(i))
		if !ok {
			return regs, valid, false
		}
		regs[d], valid[d] = v, true
	}
	return regs, valid, true
}

// loadCFI reads the CFI of an ELF file (nil if it has none we can use).
func loadCFI(path string) *objCFI {
	f, err := elf.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 {
		return nil
	}
	o := &objCFI{rows: map[uint64]*cachedRule{}}
	var hdrProg *elf.Prog
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_LOAD:
			o.prog = append(o.prog, p)
		case elf.PT_GNU_EH_FRAME:
			hdrProg = p
		}
	}
	if hdrProg == nil || hdrProg.Filesz > 1<<28 {
		return nil
	}
	hdr := make([]byte, hdrProg.Filesz)
	if _, err := hdrProg.ReadAt(hdr, 0); err != nil {
		return nil
	}
	// The .eh_frame section's place and size; without section headers,
	// from the header's pointer to the end of its segment.
	var frame []byte
	var frameAddr uint64
	if s := f.Section(".eh_frame"); s != nil && s.Type != elf.SHT_NOBITS && s.Size < 1<<28 {
		frame, err = s.Data()
		if err != nil {
			return nil
		}
		frameAddr = s.Addr
	} else {
		r := &reader{b: hdr}
		r.u8()
		ptrEnc := r.u8()
		r.u16()
		frameAddr = r.ptr(ptrEnc, hdrProg.Vaddr, hdrProg.Vaddr)
		if r.err != nil {
			return nil
		}
		for _, p := range o.prog {
			if frameAddr >= p.Vaddr && frameAddr < p.Vaddr+p.Filesz && p.Filesz < 1<<28 {
				frame = make([]byte, p.Vaddr+p.Filesz-frameAddr)
				if _, err := p.ReadAt(frame, int64(frameAddr-p.Vaddr)); err != nil && err != io.EOF {
					return nil
				}
			}
		}
	}
	o.eh, err = newEHFrame(hdr, hdrProg.Vaddr, frame, frameAddr)
	if err != nil {
		return nil
	}
	return o
}

// bias is what the mapping m adds to the file's own addresses (false: no
// segment of the file is mapped there). A mapping starts at a page
// boundary, so its file offset may lie before its segment's (the segment
// shares its first page with the one before it): the executable segment
// is the one whose pages hold the offset.
func (o *objCFI) bias(m *mapping) (uint64, bool) {
	for _, p := range o.prog {
		if p.Flags&elf.PF_X == 0 {
			continue
		}
		if m.off >= p.Off&^0xfff && m.off < p.Off+p.Filesz {
			return m.lo - (p.Vaddr + m.off - p.Off), true
		}
	}
	return 0, false
}

// row returns the CFI row of address a of the file (shared: not to be
// modified).
func (o *objCFI) row(a uint64) (*frameRule, error) {
	if c, ok := o.rows[a]; ok {
		return &c.fr, c.err
	}
	fr, err := o.eh.rule(a)
	if len(o.rows) >= 1<<16 {
		clear(o.rows)
	}
	c := &cachedRule{fr, err}
	o.rows[a] = c
	return &c.fr, err
}

// How an unwind ended, when not at the outermost frame.
const (
	endOutermost = iota // a zero return address, or the depth limit
	endShort            // the stack copy ended
	endStopped          // a frame the unwinder cannot follow
	endBroken           // an address that is not code
)

// callerSaved are the registers a call does not preserve (rax, rdx, rcx,
// rsi, rdi, r8–r11): a caller's are unknown unless its CFI says otherwise.
var callerSaved = [nRegs]bool{0: true, 1: true, 2: true, 4: true, 5: true, 8: true, 9: true, 10: true, 11: true}

// unwind walks the stack of a sample: regs (DWARF numbering, regs[dwRA]
// the sampled IP) with valid saying which are known, stack the copy of
// the thread's stack from address sp (regs[dwRSP]). It appends the IP and
// then the return addresses to out, at most max, and says how it ended.
func (u *unwinder) unwind(x *execMap, regs [nRegs]uint64, valid [nRegs]bool, stack []byte, out []uint64, max int) ([]uint64, int) {
	sp := regs[dwRSP]
	read := func(a uint64) (uint64, bool) {
		if a < sp || a-sp > uint64(len(stack)) || a-sp+8 > uint64(len(stack)) { // the first test keeps the second from wrapping
			return 0, false
		}
		return binary.LittleEndian.Uint64(stack[a-sp:]), true
	}
	exact := true // the first pc, and one a signal interrupted, is not a return address
	for {
		pc := regs[dwRA]
		if pc == 0 {
			return out, endOutermost
		}
		m := x.lookup(pc)
		if m == nil {
			return out, endBroken
		}
		out = append(out, pc)
		if len(out) >= max {
			return out, endOutermost
		}
		at := pc
		if !exact {
			at-- // inside the call instruction
		}
		exact = false
		var (
			fr  *frameRule
			err = errNoFDE
		)
		if !m.resolved {
			u.resolve(m)
		}
		if m.obj != nil {
			fr, err = m.obj.row(at - m.bias)
		}
		var next [nRegs]uint64
		var nvalid [nRegs]bool
		switch {
		case err == nil:
			if fr.signal || fr.cfaReg == cfaExpr {
				// The kernel's signal frame, below a signal handler:
				// the interrupted registers are in the ucontext.
				if u.sigreturn(m, pc) && valid[dwRSP] {
					nr, nv, ok := sigFrame(regs[dwRSP], read)
					if !ok {
						return out, endShort
					}
					if nr[dwRSP] <= regs[dwRSP] {
						return out, endStopped // the handler ran on an alternate signal stack: the interrupted one is not in the copy
					}
					regs, valid, exact = nr, nv, true
					continue
				}
				return out, endStopped
			}
			if fr.regs[dwRA].kind == ruleUndefined {
				return out, endOutermost // the ABI's mark of the outermost frame (_start, a thread's start)
			}
			if !valid[fr.cfaReg] {
				return out, endStopped
			}
			cfa := regs[fr.cfaReg] + uint64(fr.cfaOff)
			for r := 0; r < nRegs; r++ {
				rl := fr.regs[r]
				switch rl.kind {
				case ruleSame:
					if r != dwRA && !callerSaved[r] {
						next[r], nvalid[r] = regs[r], valid[r]
					}
				case ruleOffset:
					v, ok := read(cfa + uint64(rl.off))
					if !ok {
						if r == dwRA {
							return out, endShort
						}
						continue
					}
					next[r], nvalid[r] = v, true
				case ruleValOffset:
					next[r], nvalid[r] = cfa+uint64(rl.off), true
				case ruleRegister:
					if rl.off >= 0 && rl.off < nRegs {
						next[r], nvalid[r] = regs[rl.off], valid[rl.off]
					}
				}
			}
			if fr.regs[dwRSP].kind == ruleSame {
				next[dwRSP], nvalid[dwRSP] = cfa, true
			}
			if !nvalid[dwRA] {
				return out, endStopped
			}
		case err == errNoFDE:
			// No CFI: the frame-pointer chain.
			if !valid[dwRBP] {
				return out, endStopped
			}
			bp := regs[dwRBP]
			if bp == 0 {
				// The ABI's other mark of the outermost frame: the
				// entry point zeroes rbp (a program's _start without
				// call frame information of its own).
				return out, endOutermost
			}
			ra, ok1 := read(bp + 8)
			nbp, ok2 := read(bp)
			if !ok1 || !ok2 {
				return out, endShort
			}
			next = regs
			nvalid = valid
			for r := range callerSaved {
				if callerSaved[r] {
					nvalid[r] = false
				}
			}
			// The callee-saved registers other than rbp were saved
			// somewhere in the frame, where we cannot tell.
			for _, r := range [...]int{3, 12, 13, 14, 15} {
				nvalid[r] = false
			}
			next[dwRBP], next[dwRSP], next[dwRA] = nbp, bp+16, ra
		default:
			return out, endStopped
		}
		if !nvalid[dwRSP] || next[dwRSP] <= regs[dwRSP] {
			return out, endStopped // the stack must grow towards the caller
		}
		regs, valid = next, nvalid
	}
}
