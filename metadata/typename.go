package metadata

import (
	"crypto/sha1"
	"strings"
)

// SplitTypeName splits a full type name at its last dot into namespace and
// name ("System.Collections.Generic.List`1" → "System.Collections.Generic",
// "List`1").
func SplitTypeName(full string) (namespace, name string) {
	if i := strings.LastIndexByte(full, '.'); i >= 0 {
		return full[:i], full[i+1:]
	}
	return "", full
}

// JoinTypeName is the inverse of SplitTypeName.
func JoinTypeName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "." + name
}

// PublicKeyToken computes the token of a public key: the last eight bytes
// of its SHA-1 hash, in reverse order (ECMA-335 II.6.2.1.3). It returns nil
// for an empty key.
func PublicKeyToken(key []byte) []byte {
	if len(key) == 0 {
		return nil
	}
	h := sha1.Sum(key)
	tok := make([]byte, 8)
	for i := range tok {
		tok[i] = h[len(h)-1-i]
	}
	return tok
}
