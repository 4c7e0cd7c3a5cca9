// Package cgoutil converts between C memory handed over by the runtime and Go
// values, for generated code only. Everything here copies: nothing returned
// aliases C memory, so values stay valid after a callback returns.
package cgoutil

import (
	"unicode/utf16"
	"unsafe"

	"github.com/google/uuid"
)

// MaxElems caps the element count of any copy, so a corrupt count from the
// runtime cannot make the profiler allocate without bound.
const MaxElems = 1 << 28

// Slice copies n elements of type T starting at p.
func Slice[T any](p unsafe.Pointer, n int) []T {
	if p == nil || n <= 0 {
		return nil
	}
	if n > MaxElems {
		n = MaxElems
	}
	out := make([]T, n)
	copy(out, unsafe.Slice((*T)(p), n))
	return out
}

// Bools copies n C BOOLs (32-bit ints) starting at p.
func Bools(p unsafe.Pointer, n int) []bool {
	if p == nil || n <= 0 {
		return nil
	}
	if n > MaxElems {
		n = MaxElems
	}
	src := unsafe.Slice((*int32)(p), n)
	out := make([]bool, n)
	for i, v := range src {
		out[i] = v != 0
	}
	return out
}

// Bytes copies n bytes starting at p.
func Bytes(p unsafe.Pointer, n int) []byte {
	return Slice[byte](p, n)
}

// UTF16 decodes n UTF-16 code units at p, dropping a trailing NUL.
func UTF16(p unsafe.Pointer, n int) string {
	if p == nil || n <= 0 {
		return ""
	}
	if n > MaxElems {
		n = MaxElems
	}
	return DecodeUTF16(unsafe.Slice((*uint16)(p), n))
}

// UTF16Z decodes a NUL-terminated UTF-16 string at p.
func UTF16Z(p unsafe.Pointer) string {
	if p == nil {
		return ""
	}
	n := 0
	for n < MaxElems && *(*uint16)(unsafe.Add(p, 2*n)) != 0 {
		n++
	}
	return DecodeUTF16(unsafe.Slice((*uint16)(p), n))
}

// DecodeUTF16 decodes s up to its first NUL.
func DecodeUTF16(s []uint16) string {
	for i, c := range s {
		if c == 0 {
			s = s[:i]
			break
		}
	}
	return string(utf16.Decode(s))
}

// EncodeUTF16Z encodes s as NUL-terminated UTF-16.
func EncodeUTF16Z(s string) []uint16 {
	return append(utf16.Encode([]rune(s)), 0)
}

// EncodeUTF16 encodes s as UTF-16 without a terminator; never nil, so that
// its address can be taken.
func EncodeUTF16(s string) []uint16 {
	out := utf16.Encode([]rune(s))
	if out == nil {
		out = []uint16{}
	}
	return out
}

// GUID is the in-memory layout of a Windows GUID: Data1 (uint32), Data2 and
// Data3 (uint16) little-endian on x64, then 8 bytes as they are.
type GUID [16]byte

// ToGUID converts a UUID (RFC 4122 byte order) to the GUID layout.
func ToGUID(u uuid.UUID) GUID {
	var g GUID
	g[0], g[1], g[2], g[3] = u[3], u[2], u[1], u[0]
	g[4], g[5] = u[5], u[4]
	g[6], g[7] = u[7], u[6]
	copy(g[8:], u[8:])
	return g
}

// FromGUID converts the GUID layout to a UUID.
func FromGUID(g GUID) uuid.UUID {
	var u uuid.UUID
	u[0], u[1], u[2], u[3] = g[3], g[2], g[1], g[0]
	u[4], u[5] = g[5], g[4]
	u[6], u[7] = g[7], g[6]
	copy(u[8:], g[8:])
	return u
}

// GUIDAt reads a GUID at p; a nil p gives the zero UUID.
func GUIDAt(p unsafe.Pointer) uuid.UUID {
	if p == nil {
		return uuid.UUID{}
	}
	return FromGUID(*(*GUID)(p))
}

// Bool converts to a C BOOL.
func Bool(b bool) int32 {
	if b {
		return 1
	}
	return 0
}
