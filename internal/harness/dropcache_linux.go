package harness

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// dropCached writes the file at path back to disk and asks the kernel to
// drop its pages from the page cache.
func dropCached(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return err
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("posix_fadvise %s: %w", path, err)
	}
	return nil
}
