#!/usr/bin/env bash
# scripts/storm-campaign.sh: many short signal storms on every installed
# runtime, half of them on a machine loaded with CPU hogs, to show that a
# rare crash is gone (issue 13: "stack smashing detected" about once in 100
# storm runs before the SIGSEGV router's private stack).
#
# Each storm is TestSignalStorm (8 threads allocating and throwing with the
# callbacks in Go, a GC.Collect loop, SIGRTMIN and SIGURG sent to every
# thread every ~10 µs) for STORM_SECONDS (default 2). A crash keeps its core
# and gdb report in the log (the harness does that for every crashed run); a
# hang is a failure after the test's timeout.
#
#   ROUNDS      rounds per half (default 63): each round runs the storm
#               once on every runtime, so 63 rounds × 4 runtimes × 2 halves
#               = 504 storms
#   HOGS        busy-loop processes during the loaded half (default 4,
#               twice the cores here)
#   STORM_SECONDS  storm length (default 2)
#   STORM_TESTS the storm tests, space-separated (default all four, see below)
#
# Output: bin/storm-campaign.log (verbose), and a summary on stdout:
#   storm campaign: half=quiet runtime=net8.0.4 pass=63 fail=0
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bin
ROUNDS="${ROUNDS:-63}"
HOGS="${HOGS:-4}"
export CLRPROF_STORM_SECONDS="${STORM_SECONDS:-2}"
log=bin/storm-campaign.log
: >"$log"
hogs=()
stop_hogs() {
	for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done
	hogs=()
}
trap stop_hogs EXIT

go test -c -o bin/profiler.test ./profiler
go test -c -o bin/instr.test ./instr
# STORM_TESTS: which storms, space-separated (default all five):
# TestSignalStorm (callbacks in Go), TestSignalStormPerf (the same with the
# kernel's perf-event sampling of every storm thread, the mechanism of
# cpuprof's CPUPROF_MODE=perf) and TestGoHookStorm (Go hooks called by
# P/Invoke from hot managed code, package instr: GC-suspension signals
# alone, then SIGRTMIN by tgkill too), TestGoHookStormDeferred (the same
# with deferred Go hooks: records into C rings, hooks run by the drain) and
# TestStormsChained (the signal and allocation storms with a native
# profiler chained beside the Go one).
STORM_TESTS="${STORM_TESTS:-TestSignalStorm TestSignalStormPerf TestGoHookStorm TestGoHookStormDeferred TestStormsChained}"

run_half() {
	local half="$1"
	echo "=== half=$half rounds=$ROUNDS hogs=$([ "$half" = loaded ] && echo "$HOGS" || echo 0) load=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$log"
	for test in $STORM_TESTS; do
		local pkg=profiler
		case "$test" in TestGoHookStorm*) pkg=instr ;; esac
		# -count=ROUNDS runs the whole storm test (every runtime) ROUNDS
		# times; failures do not stop the rounds that follow.
		(cd "$pkg" && "../bin/$pkg.test" -test.count="$ROUNDS" -test.timeout 0 -test.v \
			-test.run "^$test\$") >>"$log" 2>&1 || true
		for rt in $(grep -oE -- "--- (PASS|FAIL): $test/[^ ]+" "$log" | sed 's/.*\///' | sort -u); do
			local pass fail
			pass=$(awk -v h="$half" '/^=== half=/{cur=$2} cur=="half="h' "$log" | grep -c -- "--- PASS: $test/$rt " || true)
			fail=$(awk -v h="$half" '/^=== half=/{cur=$2} cur=="half="h' "$log" | grep -c -- "--- FAIL: $test/$rt " || true)
			echo "storm campaign: half=$half test=$test runtime=$rt pass=$pass fail=$fail"
		done
	done
}

run_half quiet
for _ in $(seq 1 "$HOGS"); do
	sh -c 'while :; do :; done' &
	hogs+=("$!")
done
run_half loaded
stop_hogs
echo "=== done load=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$log"
