#!/usr/bin/env bash
# task test-c: the C of clrprof under the compiler's warnings as errors, its
# layering, and the unit tests that drive it (through the test hooks) under
# AddressSanitizer and UndefinedBehaviorSanitizer. Needs gcc (or clang) with
# libasan and libubsan (Debian: gcc, which ships both).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== -Wall -Wextra -Werror (the packages' #cgo CFLAGS add -Wall -Wextra), without and with the test hooks"
# Every package with C (its own files or cgo preambles); compiling is the
# point, so no commands are linked.
pkgs=$(go list -f '{{if or .CgoFiles .CFiles}}{{.ImportPath}}{{end}}' ./...)
CGO_CFLAGS="-O2 -g -Werror" go build $pkgs
CGO_CFLAGS="-O2 -g -Werror" go build -tags clrprof_testhooks $pkgs

echo "== C layering: no circle between components, no private headers of another package"
go run ./internal/cmd/clayers -v internal/sigguard profiler instr internal/chain internal/ring

export CGO_CFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=undefined -fno-sanitize-recover=undefined"
export CGO_LDFLAGS="-fsanitize=undefined"
mkdir -p bin
# The unit tests of each package that drive its C through the test hooks:
# the test files built only with the tag clrprof_testhooks.
for pkg in internal/sigguard profiler internal/ring; do
	files=$(grep -l '^//go:build clrprof_testhooks$' $pkg/*_test.go)
	names=$(grep -ho '^func Test[A-Za-z0-9_]*(t \*testing\.T)' $files | sed 's/^func \(Test[A-Za-z0-9_]*\).*/\1/' | paste -sd'|')
	if [ -z "$names" ]; then
		echo "test-c: no test-hook tests found in $pkg" >&2
		exit 1
	fi
	log=bin/test-c-asan-$(basename $pkg).log
	echo "== AddressSanitizer + UBSan: $pkg's test-hook tests ($(echo "$files" | wc -w) files)"
	if ! go test -asan -count=1 -tags clrprof_testhooks -run "^(${names})\$" -v ./$pkg >$log 2>&1; then
		cat $log
		echo "test-c: the sanitized tests failed (log: $log)" >&2
		exit 1
	fi
	echo "$(grep -c '^--- PASS' $log) passed, $(grep -c '^--- SKIP' $log) skipped (log: $log)"
done
