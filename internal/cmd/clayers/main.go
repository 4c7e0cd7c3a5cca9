// Command clayers checks that the C of clrprof's cgo packages is layered one
// way: it reads the C and assembly files of the package directories given,
// finds which file defines each clrprof_ symbol and which files use it,
// groups the files into components (x.c, x_gen.c and x_linux_amd64.S are one
// component; callbacks_gen.c is the generated half of object.c), and fails
// if the components' dependencies have a circle. The packages are checked
// together: their C is linked into one shared library, so a component may
// call one of another package (printed as dir/component), and a circle
// through two packages is a circle too. It also fails if a package's C
// reaches another package's private headers: the only include path outside
// the package's own directory may be internal/include, and an #include
// "..." names a file, never a path.
//
//	go run ./internal/cmd/clayers internal/sigguard internal/comobj internal/ring profiler elt alloc heapwalk instr internal/chain
//
// With -v it prints each component's dependencies, lowest layer first.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// aliases maps a file stem to the component it belongs to when the name
// does not say so.
var aliases = map[string]string{"callbacks": "object"}

var (
	blockComment = regexp.MustCompile(`(?s)/\*.*?\*/`)
	lineComment  = regexp.MustCompile(`//[^\n]*`)
	symbol       = regexp.MustCompile(`\bclrprof_\w+\b`)
	// A definition in C: a line at column 0 that is not static, extern,
	// typedef, a directive or a closing brace, naming a clrprof_ symbol
	// followed by ( [ ; or =.
	cDef = regexp.MustCompile(`(?m)^([A-Za-z_][^\n]*?)\b(clrprof_\w+)\s*(\(|\[|;|=)`)
	// A definition in assembly: .globl, or a stub macro invoked with the
	// name first.
	sDef = regexp.MustCompile(`(?m)^\s*(?:\.globl\s+(clrprof_\w+)|[A-Z][A-Z_0-9]*\s+(clrprof_\w+)\s*,)`)
	// A definition in a header: a static inline function, which belongs
	// to the component the header is named after.
	hDef      = regexp.MustCompile(`(?m)^static inline [^\n]*?\b(clrprof_\w+)\s*\(`)
	cgoIFlag  = regexp.MustCompile(`#cgo[^\n]*CFLAGS:[^\n]*`)
	includeIn = regexp.MustCompile(`-I(\S+)`)
	// An #include "..." (in C, a header or a cgo preamble) naming a path.
	includePath = regexp.MustCompile(`(?m)^\s*(?://\s*)?#\s*include\s*"([^"]*/[^"]*)"`)
)

func component(file string) string {
	stem := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	stem = strings.TrimSuffix(stem, "_linux_amd64")
	stem = strings.TrimSuffix(stem, "_gen")
	if a, ok := aliases[stem]; ok {
		return a
	}
	return stem
}

func strip(src string) string {
	return lineComment.ReplaceAllString(blockComment.ReplaceAllString(src, ""), "")
}

// graph returns the component dependency edges of the C of dirs, each
// component named dir: component. The static inline functions of the
// headers in dirs and in incs (the shared include directories their C may
// include) belong to the components their headers are named after (the
// component of that name in dirs, wherever its C is): a call of one is a
// dependency on that component.
func graph(dirs, incs []string) (map[string]map[string]bool, error) {
	var files, headers []string
	for _, dir := range dirs {
		for _, pat := range []string{"*.c", "*.S"} {
			m, err := filepath.Glob(filepath.Join(dir, pat))
			if err != nil {
				return nil, err
			}
			files = append(files, m...)
		}
	}
	for _, d := range append(append([]string{}, dirs...), incs...) {
		m, err := filepath.Glob(filepath.Join(d, "*.h"))
		if err != nil {
			return nil, err
		}
		headers = append(headers, m...)
	}
	byName := map[string]string{} // component name -> dir: component, of the C files
	for _, f := range files {
		byName[component(f)] = filepath.Dir(f) + ": " + component(f)
	}
	headerComponent := func(f string) string {
		if c, ok := byName[component(f)]; ok {
			return c
		}
		return filepath.Dir(f) + ": " + component(f)
	}
	component := func(f string) string { return filepath.Dir(f) + ": " + component(f) }
	defs := map[string]string{} // symbol -> component
	srcs := map[string]string{}
	for _, f := range headers {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, m := range hDef.FindAllStringSubmatch(strip(string(b)), -1) {
			defs[m[1]] = headerComponent(f)
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		src := strip(string(b))
		srcs[f] = src
		if strings.HasSuffix(f, ".S") {
			for _, m := range sDef.FindAllStringSubmatch(src, -1) {
				defs[m[1]+m[2]] = component(f)
			}
			continue
		}
		for _, ix := range cDef.FindAllStringSubmatchIndex(src, -1) {
			m := []string{src[ix[0]:ix[1]], src[ix[2]:ix[3]], src[ix[4]:ix[5]], src[ix[6]:ix[7]]}
			head := m[1]
			if m[3] == "(" {
				// A function: defined if its body's brace comes before a
				// semicolon (else a prototype).
				rest := src[ix[7]:]
				if b, s := strings.Index(rest, "{"), strings.Index(rest, ";"); b < 0 || (s >= 0 && s < b) {
					continue
				}
			}
			if strings.HasPrefix(head, "static") || strings.HasPrefix(head, "extern") || strings.HasPrefix(head, "typedef") ||
				strings.HasPrefix(head, "_Static_assert") || strings.HasPrefix(head, "return") || strings.Contains(head, "#") {
				continue
			}
			defs[m[2]] = component(f)
		}
	}
	edges := map[string]map[string]bool{}
	for f, src := range srcs {
		c := component(f)
		if edges[c] == nil {
			edges[c] = map[string]bool{}
		}
		for _, s := range symbol.FindAllString(src, -1) {
			if d, ok := defs[s]; ok && d != c {
				edges[c][d] = true
			}
		}
	}
	return edges, nil
}

// order returns the components lowest layer first, or the components of a
// circle.
func order(edges map[string]map[string]bool) ([]string, []string) {
	var names []string
	for c := range edges {
		names = append(names, c)
	}
	sort.Strings(names)
	state := map[string]int{} // 1 visiting, 2 done
	var out, stack []string
	var cycle []string
	var visit func(c string) bool
	visit = func(c string) bool {
		switch state[c] {
		case 1:
			for i := range stack {
				if stack[i] == c {
					cycle = append(append([]string{}, stack[i:]...), c)
				}
			}
			return false
		case 2:
			return true
		}
		state[c] = 1
		stack = append(stack, c)
		var deps []string
		for d := range edges[c] {
			deps = append(deps, d)
		}
		sort.Strings(deps)
		for _, d := range deps {
			if !visit(d) {
				return false
			}
		}
		stack = stack[:len(stack)-1]
		state[c] = 2
		out = append(out, c)
		return true
	}
	for _, c := range names {
		if !visit(c) {
			return nil, cycle
		}
	}
	return out, nil
}

// includePaths reports the -I directories of dir's #cgo CFLAGS lines that
// are internal/include (inc), and as bad those that are neither dir itself
// nor internal/include and the #include "..." of its C, headers and cgo
// preambles that name a path.
func includePaths(dir string) (inc, bad []string, err error) {
	seen := map[string]bool{}
	for _, pat := range []string{"*.c", "*.h", "*.S", "*.go"} {
		fs, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			return nil, nil, err
		}
		for _, f := range fs {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, nil, err
			}
			for _, m := range includePath.FindAllStringSubmatch(string(b), -1) {
				bad = append(bad, filepath.Base(f)+": #include \""+m[1]+"\"")
			}
		}
	}
	gos, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, nil, err
	}
	for _, f := range gos {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, err
		}
		for _, line := range cgoIFlag.FindAllString(string(b), -1) {
			for _, m := range includeIn.FindAllStringSubmatch(line, -1) {
				p := filepath.ToSlash(filepath.Clean(strings.ReplaceAll(m[1], "${SRCDIR}", dir)))
				switch {
				case strings.HasSuffix(p, "internal/include"):
					if !seen[p] {
						seen[p] = true
						inc = append(inc, p)
					}
				case p != filepath.ToSlash(filepath.Clean(dir)):
					bad = append(bad, filepath.Base(f)+": -I"+m[1])
				}
			}
		}
	}
	return inc, bad, nil
}

// check checks the C of dirs together.
func check(dirs []string, verbose bool) error {
	var incs []string
	seen := map[string]bool{}
	for _, dir := range dirs {
		inc, bad, err := includePaths(dir)
		if err != nil {
			return err
		}
		for _, p := range inc {
			if !seen[p] {
				seen[p] = true
				incs = append(incs, p)
			}
		}
		if len(bad) > 0 {
			return fmt.Errorf("%s: C reaches outside its package and internal/include: %s", dir, strings.Join(bad, ", "))
		}
	}
	edges, err := graph(dirs, incs)
	if err != nil {
		return err
	}
	layers, cycle := order(edges)
	if cycle != nil {
		return fmt.Errorf("circle: %s", strings.Join(cycle, " -> "))
	}
	if verbose {
		for _, c := range layers {
			dir, _, _ := strings.Cut(c, ": ")
			var deps []string
			for d := range edges[c] {
				// A component of the same package by its name, another's
				// as dir/component.
				if ddir, name, _ := strings.Cut(d, ": "); ddir == dir {
					d = name
				} else {
					d = ddir + "/" + name
				}
				deps = append(deps, d)
			}
			sort.Strings(deps)
			fmt.Printf("%s -> %s\n", c, strings.Join(deps, " "))
		}
	}
	return nil
}

func main() {
	verbose := flag.Bool("v", false, "print each component's dependencies, lowest layer first")
	flag.Parse()
	if err := check(flag.Args(), *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "clayers:", err)
		os.Exit(1)
	}
}
