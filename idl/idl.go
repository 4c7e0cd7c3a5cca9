// Package idl holds the project's side of the generator inputs: the pinned
// manifest of upstream files (never the files themselves) and the overlay of
// mapping rules the upstream definitions cannot express.
package idl

import _ "embed"

// Manifest is manifest.txt: one pinned upstream file a line.
//
//go:embed manifest.txt
var Manifest []byte

// Overlay is overlay.txt, read by gen.ParseOverlay.
//
//go:embed overlay.txt
var Overlay []byte
