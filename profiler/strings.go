package profiler

/*
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <sys/uio.h>
#include <unistd.h>

// clrprof_probe_read copies n bytes from src in this process into dst
// without touching src directly: process_vm_readv fails with EFAULT,
// instead of raising SIGSEGV, when src is not mapped. It returns 0 on
// success, else an errno value.
static int clrprof_probe_read(void *dst, uintptr_t src, size_t n) {
	struct iovec local = { dst, n };
	struct iovec remote = { (void *)src, n };
	ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	if (got < 0) return errno;
	if ((size_t)got != n) return EFAULT;
	return 0;
}
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"syscall"
	"unicode/utf16"
	"unsafe"

	"github.com/clrprof/clrprof/metadata"
)

// maxStringChars bounds what ReadString copies (a managed string's length
// is an int32; 256 Mi characters is half a gigabyte of UTF-16).
const maxStringChars = 1 << 28

// probeRead copies len(dst) bytes from addr, failing instead of faulting
// when the memory is not mapped.
func probeRead(dst []byte, addr uintptr) error {
	if len(dst) == 0 {
		return nil
	}
	if rc := C.clrprof_probe_read(unsafe.Pointer(&dst[0]), C.uintptr_t(addr), C.size_t(len(dst))); rc != 0 {
		return fmt.Errorf("reading %d bytes at %#x: %w", len(dst), addr, syscall.Errno(rc))
	}
	return nil
}

// stringType caches what ReadString learns once: System.String's ClassID
// (its MethodTable, which every string object starts with) and the
// string layout.
var stringType struct {
	mu     sync.Mutex
	class  ClassID
	layout StringLayout2Result
}

// ReadString returns the contents of a managed string object (a
// System.String): for instance an argument or return value of an ELT hook
// read with [Arg.Object], or an object seen in a GC callback.
//
// The object must not move while it is read: call it during the callback or
// hook that handed out the ObjectID (the runtime is then in cooperative
// mode, or suspended for a collection), never later from another goroutine.
//
// ReadString never dereferences obj blindly: it reads the object's first
// word with a probing read (which fails instead of faulting on unmapped
// memory) and goes on only when that word is System.String's ClassID, so a
// value that is no string reference (0, an object of another class, or
// garbage such as an argument range a runtime filled wrongly) gives an
// error, not a crash. It also fails when the length the string holds does
// not fit in the object's size.
func (x *Info) ReadString(obj ObjectID) (string, error) {
	if obj == 0 {
		return "", fmt.Errorf("clrprof: ReadString: null object")
	}
	if obj%8 != 0 {
		return "", fmt.Errorf("clrprof: ReadString: %#x is not an object reference (misaligned)", uintptr(obj))
	}
	class, layout, err := x.stringClass()
	if err != nil {
		return "", fmt.Errorf("clrprof: ReadString: %w", err)
	}
	var word [8]byte
	if err := probeRead(word[:], uintptr(obj)); err != nil {
		return "", fmt.Errorf("clrprof: ReadString: %#x is not an object reference: %w", uintptr(obj), err)
	}
	if mt := ClassID(binary.LittleEndian.Uint64(word[:])); mt != class {
		return "", fmt.Errorf("clrprof: ReadString: %#x is not a string (its type word is %#x, System.String's is %#x)", uintptr(obj), uintptr(mt), uintptr(class))
	}
	size, err := x.GetObjectSize(obj)
	if err != nil {
		return "", fmt.Errorf("clrprof: ReadString: GetObjectSize: %w", err)
	}
	var lenBytes [4]byte
	if err := probeRead(lenBytes[:], uintptr(obj)+uintptr(layout.StringLengthOffset)); err != nil {
		return "", fmt.Errorf("clrprof: ReadString: %w", err)
	}
	n := binary.LittleEndian.Uint32(lenBytes[:])
	if n > maxStringChars || uint64(layout.BufferOffset)+2*uint64(n) > uint64(size) {
		return "", fmt.Errorf("clrprof: ReadString: string %#x claims %d characters in %d bytes", uintptr(obj), n, size)
	}
	if n == 0 {
		return "", nil
	}
	b := make([]byte, 2*n)
	if err := probeRead(b, uintptr(obj)+uintptr(layout.BufferOffset)); err != nil {
		return "", fmt.Errorf("clrprof: ReadString: %w", err)
	}
	u := make([]uint16, n)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u)), nil
}

// stringClass finds System.String's ClassID in System.Private.CoreLib
// (once it succeeds; a failure is retried at the next call).
//
// It asks by name (EnumModules, then GetClassFromToken) where the runtime
// allows that. From .NET 10 on the runtime refuses those synchronous calls
// inside enter/leave hooks (CORPROF_E_UNSUPPORTED_CALL_SEQUENCE: an ELT hook
// is not a callback), so there it looks among the objects of the non-GC heap
// instead (ICorProfilerInfo14, .NET 8 and later: string literals live there)
// for one whose class is CoreLib's System.String, with calls the runtime
// allows anywhere; those objects are the runtime's own, never a guess.
func (x *Info) stringClass() (ClassID, StringLayout2Result, error) {
	stringType.mu.Lock()
	defer stringType.mu.Unlock()
	if stringType.class != 0 {
		return stringType.class, stringType.layout, nil
	}
	layout, err := x.GetStringLayout2()
	if err != nil {
		return 0, layout, fmt.Errorf("GetStringLayout2: %w", err)
	}
	c, err := x.stringClassByName()
	if err != nil && errors.Is(err, CORPROF_E_UNSUPPORTED_CALL_SEQUENCE) {
		var ferr error
		if c, ferr = x.stringClassFromNonGCHeap(); ferr != nil {
			err = fmt.Errorf("%w; and from the non-GC heap: %w", err, ferr)
		} else {
			err = nil
		}
	}
	if err != nil {
		return 0, layout, err
	}
	stringType.class, stringType.layout = c, layout
	return c, layout, nil
}

// stringClassByName looks System.String up in System.Private.CoreLib.
func (x *Info) stringClassByName() (ClassID, error) {
	e, err := x.EnumModules()
	if err != nil {
		return 0, fmt.Errorf("EnumModules: %w", err)
	}
	defer e.Release()
	for {
		batch, err := e.Next()
		if err != nil {
			return 0, fmt.Errorf("EnumModules: %w", err)
		}
		if len(batch) == 0 {
			return 0, fmt.Errorf("System.Private.CoreLib is not loaded")
		}
		for _, m := range batch {
			mi, err := x.GetModuleInfo(m)
			if err != nil || filepath.Base(mi.Name) != "System.Private.CoreLib.dll" {
				continue
			}
			tok, err := x.coreLibStringToken(m)
			if err != nil {
				return 0, err
			}
			c, err := x.GetClassFromToken(m, tok)
			if err != nil {
				return 0, fmt.Errorf("System.String's ClassID: %w", err)
			}
			return c, nil
		}
	}
}

// coreLibStringToken returns System.String's TypeDef in module m.
func (x *Info) coreLibStringToken(m ModuleID) (metadata.Token, error) {
	imp, err := x.ModuleImport(m)
	if err != nil {
		return 0, err
	}
	defer imp.Release()
	tok, err := imp.FindTypeDefByName("System.String", 0)
	if err != nil {
		return 0, fmt.Errorf("System.String in System.Private.CoreLib: %w", err)
	}
	return tok, nil
}

// maxNonGCProbe bounds how many non-GC heap objects stringClassFromNonGCHeap
// looks at (the first is a string literal on .NET 8 to 11).
const maxNonGCProbe = 4096

// stringClassFromNonGCHeap finds System.String's ClassID as the class of a
// non-GC heap object: one whose class is CoreLib's TypeDef System.String.
func (x *Info) stringClassFromNonGCHeap() (ClassID, error) {
	e, err := x.EnumerateNonGCObjects()
	if err != nil {
		return 0, fmt.Errorf("EnumerateNonGCObjects: %w", err)
	}
	defer e.Release()
	seen := 0
	checked := map[ClassID]bool{}
	for obj, err := range e.All() {
		if err != nil {
			return 0, fmt.Errorf("EnumerateNonGCObjects: %w", err)
		}
		if seen++; seen > maxNonGCProbe {
			break
		}
		c, err := x.GetClassFromObject(obj)
		if err != nil || checked[c] {
			continue
		}
		checked[c] = true
		ci, err := x.GetClassIDInfo2(c)
		if err != nil || len(ci.TypeArgs) != 0 {
			continue
		}
		mi, err := x.GetModuleInfo(ci.ModuleID)
		if err != nil || filepath.Base(mi.Name) != "System.Private.CoreLib.dll" {
			continue
		}
		tok, err := x.coreLibStringToken(ci.ModuleID)
		if err != nil {
			return 0, err
		}
		if ci.TypeDefToken == tok {
			return c, nil
		}
	}
	return 0, fmt.Errorf("no System.String among the first %d objects", min(seen, maxNonGCProbe))
}
