package metadata

import "fmt"

// Token is a metadata token: the table in the high byte, the row (RID) in
// the low three bytes.
type Token uint32

// Table returns the token's table byte shifted back into place
// (0x06000000 for a MethodDef).
func (t Token) Table() uint32 { return uint32(t) & 0xff000000 }

// RID returns the token's row number.
func (t Token) RID() uint32 { return uint32(t) & 0x00ffffff }

// IsNil reports whether the token has no row.
func (t Token) IsNil() bool { return t.RID() == 0 }

// String returns the token in hex ("0x06000001").
func (t Token) String() string { return fmt.Sprintf("0x%08x", uint32(t)) }
