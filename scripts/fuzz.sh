#!/usr/bin/env bash
# scripts/fuzz.sh: run every fuzz target of the module for a bounded time
# each (FUZZTIME, default 20s). A failure leaves the crashing input under the
# package's testdata/fuzz/<Target>/ (commit it with the fix) and makes the
# script fail.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME="${FUZZTIME:-20s}"
status=0
while IFS=: read -r file name; do
	pkg="./$(dirname "$file")"
	echo "== $pkg $name ($FUZZTIME)"
	if ! go test -run='^$' -fuzz="^${name}\$" -fuzztime="$FUZZTIME" "$pkg"; then
		echo "fuzz.sh: $pkg $name FAILED" >&2
		status=1
	fi
done < <(git ls-files '*_test.go' | xargs grep -H -o '^func Fuzz[A-Za-z0-9_]*' | sed 's/func //' | sort)
exit $status
