// Package gen is the clrprof code generator: it parses the runtime's own
// interface definitions (corprof.idl in MIDL, the C++ interfaces of cor.h,
// the enums and constants of corhdr.h and the HRESULTs of corerror.h) into
// one model, and emits the Go and C bindings of packages profiler and
// metadata.
//
// The pipeline is parse → model → emit:
//
//   - Lex, Preprocess and the parsers (ParseIDL, ParseCppHeader,
//     ParseConstHeader, ParseErrorHeader) build File values; errors carry the
//     file, line and column.
//   - An Overlay (idl/overlay.txt) supplies what the inputs cannot say.
//   - planMethod decides how each C parameter appears in Go (argument, slice,
//     string, result, hidden count) and the emitters render the C header,
//     thunks, callback vtable and the Go files through jennifer.
//
// Generate runs the whole pipeline over an input directory; cmd/comgen is
// the command line around it.
package gen

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/clrprof/clrprof/idl"
)

// Inputs are the parsed generator inputs.
type Inputs struct {
	Corprof  *File
	Cor      *File
	Corhdr   *File
	Corerror *File
	Opcodes  []*OpcodeDef // opcode.def
}

// ReadInputs reads and parses the input files in dir.
func ReadInputs(dir string) (*Inputs, error) {
	read := func(name string, parse func(string, []byte) (*File, error)) (*File, error) {
		src, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		return parse(name, src)
	}
	var in Inputs
	var err error
	if in.Corprof, err = read("corprof.idl", ParseIDL); err != nil {
		return nil, err
	}
	if in.Cor, err = read("cor.h", ParseCppHeader); err != nil {
		return nil, err
	}
	if in.Corhdr, err = read("corhdr.h", ParseConstHeader); err != nil {
		return nil, err
	}
	if in.Corerror, err = read("corerror.h", ParseErrorHeader); err != nil {
		return nil, err
	}
	src, err := os.ReadFile(filepath.Join(dir, "opcode.def"))
	if err != nil {
		return nil, err
	}
	if in.Opcodes, err = ParseOpcodes("opcode.def", src); err != nil {
		return nil, err
	}
	return &in, nil
}

// Output maps module-relative paths to generated file contents.
type Output struct {
	Files map[string][]byte
	Stats Stats
	// UnusedDocs are the records of idl/docs.txt no generated declaration
	// used: misspelt keys, or declarations these inputs lack (older IDL).
	UnusedDocs []string
	// SkippedValues are the overlay's value rules ("Enum.Name") these
	// inputs are too old for: they lack the enumerator the value follows.
	SkippedValues []string
}

// Paths returns the output paths in sorted order.
func (o *Output) Paths() []string { return sortedKeys(o.Files) }

// Generate emits every generated file of the module from the inputs.
// cmdline is recorded in each file's header.
func Generate(in *Inputs, cmdline string) (*Output, error) {
	ov, err := ParseOverlay("idl/overlay.txt", idl.Overlay)
	if err != nil {
		return nil, err
	}
	if ov.Docs, err = ParseDocs("idl/docs.txt", idl.Docs); err != nil {
		return nil, err
	}
	// Enumerators newer runtimes added that the inputs lack.
	out := &Output{Files: map[string][]byte{}}
	if out.SkippedValues, err = ov.AddValues(in.Corprof, in.Cor, in.Corhdr); err != nil {
		return nil, err
	}
	prof, err := GenerateProfiler(cmdline, in.Corprof, in.Corerror, ov, MetadataStructs(in.Cor, in.Corhdr), &out.Stats)
	if err != nil {
		return nil, err
	}
	for k, v := range prof {
		out.Files[filepath.ToSlash(filepath.Clean("profiler/"+k))] = v
	}
	if err := ov.Check(in.Corprof, in.Cor); err != nil {
		return nil, err
	}
	md, err := GenerateMetadata(cmdline, in.Cor, in.Corhdr, ov, &out.Stats)
	if err != nil {
		return nil, err
	}
	for k, v := range md {
		out.Files["metadata/"+k] = v
	}
	if out.Files["ilrw/opcodes_gen.go"], err = GenerateOpcodes(cmdline, in.Opcodes); err != nil {
		return nil, err
	}
	out.UnusedDocs = ov.Docs.Unused()
	return out, nil
}

// Diff compares the output with the files under root and returns the paths
// that differ or are missing, and generated-looking files that would be
// left stale.
func (o *Output) Diff(root string) ([]string, error) {
	var diffs []string
	for _, p := range o.Paths() {
		cur, err := os.ReadFile(filepath.Join(root, p))
		if err != nil || !bytes.Equal(cur, o.Files[p]) {
			diffs = append(diffs, p)
		}
	}
	for _, dir := range []string{"profiler", "metadata", "internal/com", "internal/comobj", "internal/chain", "internal/include", "ilrw"} {
		matches, _ := filepath.Glob(filepath.Join(root, dir, "*_gen.*"))
		for _, m := range matches {
			rel, _ := filepath.Rel(root, m)
			if _, ok := o.Files[filepath.ToSlash(rel)]; !ok {
				diffs = append(diffs, filepath.ToSlash(rel)+" (stale)")
			}
		}
	}
	sort.Strings(diffs)
	return diffs, nil
}

// Write writes every output file under root.
func (o *Output) Write(root string) error {
	for _, p := range o.Paths() {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, o.Files[p], 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", p, err)
		}
	}
	return nil
}
