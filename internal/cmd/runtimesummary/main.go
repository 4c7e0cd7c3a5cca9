// Command runtimesummary prints how many runtime subtests passed, failed
// and were skipped on each runtime, from the file the harness writes when
// CLRPROF_RUNTIME_SUMMARY names it (task test does). A line each:
//
//	net10.0.15: 412 passed, 0 failed, 17 skipped
//
// It prints the failed subtests' names too, and exits 1 if there were any
// or the file is missing.
package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

type counts struct{ pass, fail, skip int }

// versionLess orders runtime names by their version ("netcore2.1.30"
// before "net8.0.4" before "net10.0.15"), then by name.
func versionLess(a, b string) bool {
	va, vb := version(a), version(b)
	for i := range va {
		if va[i] != vb[i] {
			return va[i] < vb[i]
		}
	}
	return a < b
}

func version(name string) [3]int {
	var v [3]int
	i := strings.IndexAny(name, "0123456789")
	if i < 0 {
		return v
	}
	for k, part := range strings.SplitN(name[i:], ".", 3) {
		n, _ := strconv.Atoi(strings.TrimRightFunc(part, func(r rune) bool { return r < '0' || r > '9' }))
		v[k] = n
	}
	return v
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: runtimesummary FILE")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "runtimesummary:", err)
		os.Exit(1)
	}
	defer f.Close()
	by := map[string]*counts{}
	var order []string
	var failed []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.SplitN(sc.Text(), " ", 3)
		if len(fields) != 3 {
			continue
		}
		c := by[fields[0]]
		if c == nil {
			c = &counts{}
			by[fields[0]] = c
			order = append(order, fields[0])
		}
		switch fields[1] {
		case "pass":
			c.pass++
		case "fail":
			c.fail++
			failed = append(failed, fields[2])
		case "skip":
			c.skip++
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "runtimesummary:", err)
		os.Exit(1)
	}
	sort.Slice(order, func(i, j int) bool { return versionLess(order[i], order[j]) })
	fmt.Println("runtime subtests, per runtime:")
	for _, rt := range order {
		c := by[rt]
		fmt.Printf("  %s: %d passed, %d failed, %d skipped\n", rt, c.pass, c.fail, c.skip)
	}
	sort.Strings(failed)
	for _, n := range failed {
		fmt.Println("  failed:", n)
	}
	if len(failed) > 0 {
		os.Exit(1)
	}
}
