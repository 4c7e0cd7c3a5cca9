package reach

// #cgo CFLAGS: -I${SRCDIR}/../circle
import "C"
