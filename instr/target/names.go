package target

import (
	"strconv"
	"strings"
)

// TypeFromIL converts a type name as package metadata and ilrw.Method.Name
// write it (nesting after '/': Shop.Box`1/Inner) into the reflection full
// name targets use (Shop.Box`1+Inner).
func TypeFromIL(name string) string {
	return strings.ReplaceAll(name, "/", "+")
}

// TypeFromProfiler converts a class name as package profiler writes it
// (Info.ClassName, Info.FunctionNameParts: type arguments in angle
// brackets, nesting after '+', as in Shop.Box<int>+Inner or
// Shop.Pair<int,System.__Canon>) into the reflection full name targets use
// (Shop.Box`1+Inner, Shop.Pair`2): the type arguments of each nesting level
// become its arity. Compiler-generated names that start with an angle
// bracket (<>c, <Main>d__0) are kept as they are.
func TypeFromProfiler(name string) string {
	var sb strings.Builder
	for i, seg := range splitTop(name, '+') {
		if i > 0 {
			sb.WriteByte('+')
		}
		base, n := stripArgs(seg)
		sb.WriteString(base)
		if n > 0 {
			sb.WriteByte('`')
			sb.WriteString(strconv.Itoa(n))
		}
	}
	return sb.String()
}

// splitTop splits s at sep outside angle brackets.
func splitTop(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<':
			depth++
		case '>':
			if depth > 0 {
				depth--
			}
		case sep:
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// stripArgs removes a trailing <a,b,...> from a segment and counts its
// top-level arguments. A segment whose matching '<' is its first character
// (<Main>, a compiler-generated name) has no arguments.
func stripArgs(seg string) (string, int) {
	if !strings.HasSuffix(seg, ">") {
		return seg, 0
	}
	depth := 0
	for i := len(seg) - 1; i >= 0; i-- {
		switch seg[i] {
		case '>':
			depth++
		case '<':
			depth--
			if depth == 0 {
				if i == 0 {
					return seg, 0
				}
				args := seg[i+1 : len(seg)-1]
				return seg[:i], len(splitTop(args, ','))
			}
		}
	}
	return seg, 0
}
