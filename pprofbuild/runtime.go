package pprofbuild

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/clrprof/clrprof/profiler"
)

// RuntimeVersion names the runtime the profiler is loaded in, as
// ".NET Core 3.1.23" or ".NET 8.0.4": the version of the directory the
// runtime (libcoreclr.so) was loaded from (/proc/self/maps), which is the
// Microsoft.NETCore.App version. GetRuntimeInformation is no help there:
// .NET Core reports 4.0.30319 through it. When the path says nothing, it
// falls back to GetRuntimeInformation's numbers and says so.
func RuntimeVersion(info *profiler.Info) string {
	if v := coreclrDirVersion(); v != "" {
		major, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
		if major >= 5 {
			return ".NET " + v
		}
		return ".NET Core " + v
	}
	if ri, err := info.GetRuntimeInformation(); err == nil {
		return fmt.Sprintf("CoreCLR (GetRuntimeInformation: %d.%d.%d.%d %s)", ri.MajorVersion, ri.MinorVersion, ri.BuildNumber, ri.QfeVersion, ri.VersionString)
	}
	return "CoreCLR (version unknown)"
}

func coreclrDirVersion() string {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		i := strings.Index(line, "/")
		if i < 0 || !strings.HasSuffix(line, "/libcoreclr.so") {
			continue
		}
		v := filepath.Base(filepath.Dir(line[i:]))
		if v != "" && v[0] >= '0' && v[0] <= '9' {
			return v
		}
	}
	return ""
}
