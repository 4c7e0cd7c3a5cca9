package profiler

/*
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

typedef int32_t (*clrprof_get_dispenser_fn)(const void *clsid, const void *iid, void **out);

// clrprof_metadata_get_dispenser calls the runtime's exported
// MetaDataGetDispenser in the already loaded library at path. *step says how
// far it got: 0 the library is not loaded, 1 it lacks the export, 2 called.
static int32_t clrprof_metadata_get_dispenser(const char *path, const void *clsid, const void *iid, void **out, int *step) {
	*step = 0;
	void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
	if (h == NULL) {
		return 0;
	}
	*step = 1;
	clrprof_get_dispenser_fn f = (clrprof_get_dispenser_fn)dlsym(h, "MetaDataGetDispenser");
	int32_t hr = 0;
	if (f != NULL) {
		*step = 2;
		hr = f(clsid, iid, out);
	}
	dlclose(h);
	return hr;
}
*/
import "C"

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"unsafe"

	"github.com/clrprof/clrprof/internal/cgoutil"
	"github.com/clrprof/clrprof/internal/com"
	"github.com/clrprof/clrprof/metadata"
	"github.com/google/uuid"
)

// clsidCorMetaDataDispenser is CLSID_CorMetaDataDispenser (cor.h).
var clsidCorMetaDataDispenser = uuid.UUID{0xe5, 0xcb, 0x7a, 0x31, 0x75, 0x12, 0x11, 0xd2, 0x89, 0xce, 0x00, 0x80, 0xc7, 0x92, 0xe5, 0xd8}

// MetaDataDispenser returns a new metadata dispenser of the runtime the
// profiler runs in (the runtime's exported MetaDataGetDispenser): with it a
// profiler opens the metadata of any assembly from its path, loaded or not
// (see [metadata.DispenserEx.OpenImport]). It needs no Info, so it works
// from any callback and from any goroutine once the runtime has loaded the
// profiler. The result is owned: release it with Release.
//
// The error matches ErrNotAvailable when the process has no libcoreclr.so
// loaded or the library does not export the function (every runtime the
// SDK supports, .NET Core 2.0 to .NET 8, does).
func MetaDataDispenser() (*metadata.DispenserEx, error) {
	path, err := loadedLibrary("libcoreclr.so")
	if err != nil {
		return nil, err
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	clsid, iid := cgoutil.ToGUID(clsidCorMetaDataDispenser), cgoutil.ToGUID(metadata.IIDDispenserEx)
	var out unsafe.Pointer
	var step C.int
	hr := C.clrprof_metadata_get_dispenser(cpath, unsafe.Pointer(&clsid), unsafe.Pointer(&iid), &out, &step)
	switch {
	case step == 0:
		return nil, fmt.Errorf("clrprof: MetaDataDispenser: %s is mapped but dlopen(RTLD_NOLOAD) does not find it: %w", path, ErrNotAvailable)
	case step == 1:
		return nil, fmt.Errorf("clrprof: MetaDataDispenser: %s does not export MetaDataGetDispenser: %w", path, ErrNotAvailable)
	case hr < 0:
		return nil, fmt.Errorf("clrprof: MetaDataGetDispenser: %w", com.HRESULT(hr))
	case out == nil:
		return nil, fmt.Errorf("clrprof: MetaDataGetDispenser returned no object")
	}
	unk := com.OwnUnknown(out)
	defer unk.Release()
	return metadata.QueryDispenserEx(unk)
}

// loadedLibrary finds the path of a shared library mapped into this
// process, by the last element of its path (/proc/self/maps).
func loadedLibrary(base string) (string, error) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return "", fmt.Errorf("clrprof: %w (%v)", ErrNotAvailable, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		// address perms offset dev inode path: the path is the sixth
		// field and may contain spaces.
		fields := strings.Fields(line)
		if len(fields) < 6 {
			continue
		}
		i := strings.Index(line, " /")
		if i < 0 {
			continue
		}
		p := line[i+1:]
		if strings.HasSuffix(p, "/"+base) {
			return p, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("clrprof: reading /proc/self/maps: %w", err)
	}
	return "", fmt.Errorf("clrprof: no %s in this process: %w", base, errNoRuntime)
}

var errNoRuntime = fmt.Errorf("not loaded by a runtime: %w", ErrNotAvailable)
