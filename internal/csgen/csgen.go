// Package csgen compiles the C# parts the SDK and its samples embed (the
// instr loader, a sample's integration) with Mono's mcs, for go generate,
// and tells whether a committed assembly is stale against its sources.
//
// mcs output is not byte-deterministic (it stamps a module version id), so
// staleness is judged by a stamp file written beside the assembly: the
// SHA-256 of the mcs arguments and of every source file. A test compares
// the stamp with the sources of the day (see Check).
package csgen

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// StampSuffix is appended to the assembly's path to name its stamp file.
const StampSuffix = ".src-sha256"

// Hash is the hex SHA-256 of the arguments and the sources' contents, in
// the order given.
func Hash(args []string, sources []string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "csgen-v1\x00%s\x00", strings.Join(args, "\x00"))
	for _, s := range sources {
		b, err := os.ReadFile(s)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.Base(s), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Compile runs mcs -target:library -optimize+ with args on the sources,
// writing out, and writes out's stamp.
func Compile(out string, args []string, sources []string) error {
	full := append([]string{"-target:library", "-optimize+", "-nologo", "-out:" + out}, args...)
	full = append(full, sources...)
	cmd := exec.Command("mcs", full...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("mcs %s: %v\n%s", strings.Join(full, " "), err, b)
	}
	sum, err := Hash(args, sources)
	if err != nil {
		return err
	}
	return os.WriteFile(out+StampSuffix, []byte(sum+"\n"), 0o644)
}

// RoslynArg marks a stamp made by CompileRoslyn: Check is given
// append(args, RoslynArg+tfm) for such an assembly.
const RoslynArg = "-roslyn="

// CompileRoslyn compiles with Roslyn's csc (as scripts/setup.sh lays it out
// from ../shared/dotnet) against the reference assemblies of tfm ("net10.0"),
// deterministically, for a helper that needs APIs Mono's reference
// assemblies lack; the assembly then loads on that .NET and later ones.
func CompileRoslyn(out, tfm string, args []string, sources []string) error {
	cache := os.Getenv("CLRPROF_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return err
		}
		cache = filepath.Join(home, ".cache", "clrprof")
	}
	csc := filepath.Join(cache, "dotnet", "bin", "csc")
	rsp := filepath.Join(cache, "dotnet", "ref", tfm+".rsp")
	full := append([]string{"-nologo", "-noconfig", "@" + rsp, "-target:library", "-optimize+", "-deterministic", "-out:" + out}, args...)
	full = append(full, sources...)
	cmd := exec.Command(csc, full...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("csc %s: %v\n%s", strings.Join(full, " "), err, b)
	}
	sum, err := Hash(append(append([]string{}, args...), RoslynArg+tfm), sources)
	if err != nil {
		return err
	}
	return os.WriteFile(out+StampSuffix, []byte(sum+"\n"), 0o644)
}

// Check returns an error when out's stamp is missing or does not match the
// sources and args (the assembly must be regenerated with go generate).
func Check(out string, args []string, sources []string) error {
	if _, err := os.Stat(out); err != nil {
		return err
	}
	stamp, err := os.ReadFile(out + StampSuffix)
	if err != nil {
		return err
	}
	sum, err := Hash(args, sources)
	if err != nil {
		return err
	}
	if strings.TrimSpace(string(stamp)) != sum {
		return fmt.Errorf("%s is stale against its sources %v: run go generate", out, sources)
	}
	return nil
}
