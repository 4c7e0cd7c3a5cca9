package profiler

import (
	"sync"
	"testing"

	"github.com/clrprof/clrprof/metadata"
)

// fakeOpener counts opens and releases of distinct readers.
type fakeOpener struct {
	mu              sync.Mutex
	opens, releases int
}

func (f *fakeOpener) open() (*metadata.Import2, func(), error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opens++
	released := false
	return new(metadata.Import2), func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if released {
			panic("reader released twice")
		}
		released = true
		f.releases++
	}, nil
}

func (f *fakeOpener) counts() (int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.opens, f.releases
}

// TestImportCacheOnlyWhileUnloadsAreSeen: without MonitorModuleLoads every
// call opens and releases its own reader; with it, one reader per module
// serves every call until the module unloads.
func TestImportCacheOnlyWhileUnloadsAreSeen(t *testing.T) {
	c := cacheOf(&Info{}) // the zero cache a new Info holds
	var f fakeOpener
	for i := 0; i < 3; i++ {
		_, done, _ := c.get(1, f.open)
		done()
	}
	if o, r := f.counts(); o != 3 || r != 3 {
		t.Fatalf("unwatched: %d opens, %d releases, want 3 and 3", o, r)
	}
	c.setWatched(true)
	var first *metadata.Import2
	for i := 0; i < 5; i++ {
		imp, done, _ := c.get(1, f.open)
		if first == nil {
			first = imp
		} else if imp != first {
			t.Fatal("watched: another reader for the same module")
		}
		done()
	}
	_, done2, _ := c.get(2, f.open)
	done2()
	if o, r := f.counts(); o != 5 || r != 3 {
		t.Fatalf("watched: %d opens, %d releases, want 5 (3 + one per module) and 3", o, r)
	}
	// Unload of module 1: its reader is released, module 2's kept; the
	// next call for 1 opens a new reader.
	c.drop(1)
	if o, r := f.counts(); o != 5 || r != 4 {
		t.Fatalf("after unload: %d opens, %d releases, want 5 and 4", o, r)
	}
	imp, done, _ := c.get(1, f.open)
	done()
	if imp == first {
		t.Fatal("the unloaded module's reader was served again")
	}
	// Turning module loads off drops everything.
	c.setWatched(false)
	if o, r := f.counts(); o != 6 || r != 6 {
		t.Fatalf("unwatched again: %d opens, %d releases, want 6 and 6", o, r)
	}
}

// TestImportCacheReleasesAfterLastUser: a reader dropped while in use is
// released by its last user, not before.
func TestImportCacheReleasesAfterLastUser(t *testing.T) {
	c := cacheOf(&Info{}) // the zero cache a new Info holds
	c.setWatched(true)
	var f fakeOpener
	_, done1, _ := c.get(7, f.open)
	_, done2, _ := c.get(7, f.open)
	c.drop(7)
	if _, r := f.counts(); r != 0 {
		t.Fatal("reader released while two users hold it")
	}
	done1()
	if _, r := f.counts(); r != 0 {
		t.Fatal("reader released while one user holds it")
	}
	done2()
	if o, r := f.counts(); o != 1 || r != 1 {
		t.Fatalf("%d opens, %d releases, want 1 and 1", o, r)
	}
}

// TestImportCacheConcurrent hammers get, drop and setWatched from several
// goroutines (run with -race): every reader opened is released exactly
// once when everything is dropped, and never while in use.
func TestImportCacheConcurrent(t *testing.T) {
	c := cacheOf(&Info{}) // the zero cache a new Info holds
	c.setWatched(true)
	var f fakeOpener
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				m := ModuleID(i % 5)
				_, done, err := c.get(m, f.open)
				if err != nil {
					t.Error(err)
					return
				}
				switch {
				case g == 0 && i%50 == 0:
					c.drop(m)
				case g == 1 && i%300 == 0:
					c.setWatched(i%600 == 0)
				}
				done()
			}
		}(g)
	}
	wg.Wait()
	c.setWatched(false)
	if o, r := f.counts(); o != r || o == 0 {
		t.Fatalf("%d readers opened, %d released", o, r)
	}
}
