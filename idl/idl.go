// Package idl holds the project's side of the generator inputs: the pinned
// manifest of upstream files (never the files themselves) and the overlay of
// mapping rules the upstream definitions cannot express.
package idl

import (
	_ "embed"
	"strings"
)

// Manifest is manifest.txt: one pinned upstream file a line.
//
//go:embed manifest.txt
var Manifest []byte

// Overlay is overlay.txt, read by gen.ParseOverlay.
//
//go:embed overlay.txt
var Overlay []byte

// Docs is docs.txt, read by gen.ParseDocs: what runtime methods, results
// and constants mean for a Go user, and which runtime brings each
// interface version.
//
//go:embed docs.txt
var Docs []byte

// Record is one non-empty line of manifest.txt or overlay.txt: its 1-based
// line number and its white-space separated fields, '#' comments removed.
type Record struct {
	Line   int
	Fields []string
}

// Records splits a file of this package's text formats into records.
func Records(src []byte) []Record {
	var out []Record
	for i, text := range strings.Split(string(src), "\n") {
		if j := strings.IndexByte(text, '#'); j >= 0 {
			text = text[:j]
		}
		if f := strings.Fields(text); len(f) > 0 {
			out = append(out, Record{Line: i + 1, Fields: f})
		}
	}
	return out
}
