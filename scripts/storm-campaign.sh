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
#   STORM_TEST  the storm test (default TestSignalStorm; TestStormsChained runs
#               the signal and allocation storms with a native profiler
#               chained beside the Go one)
#
# Output: bin/storm-campaign.log (verbose), and a summary on stdout:
#   storm campaign: half=quiet runtime=net8.0.4 pass=63 fail=0
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bin
ROUNDS="${ROUNDS:-63}"
HOGS="${HOGS:-4}"
export CLRPROF_STORM_SECONDS="${STORM_SECONDS:-2}"
STORM_TEST="${STORM_TEST:-TestSignalStorm}"
log=bin/storm-campaign.log
: >"$log"
hogs=()
stop_hogs() {
	for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done
	hogs=()
}
trap stop_hogs EXIT

go test -c -o bin/profiler.test ./profiler

run_half() {
	local half="$1"
	echo "=== half=$half rounds=$ROUNDS hogs=$([ "$half" = loaded ] && echo "$HOGS" || echo 0) load=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$log"
	# -count=ROUNDS runs the whole storm test (every runtime) ROUNDS times;
	# failures do not stop the rounds that follow.
	(cd profiler && ../bin/profiler.test -test.count="$ROUNDS" -test.timeout 0 -test.v \
		-test.run "^${STORM_TEST}\$") >>"$log" 2>&1 || true
	for rt in $(grep -oE -- "--- (PASS|FAIL): ${STORM_TEST}/[^ ]+" "$log" | sed 's/.*\///' | sort -u); do
		local pass fail
		pass=$(awk -v h="$half" '/^=== half=/{cur=$2} cur=="half="h' "$log" | grep -c -- "--- PASS: ${STORM_TEST}/$rt " || true)
		fail=$(awk -v h="$half" '/^=== half=/{cur=$2} cur=="half="h' "$log" | grep -c -- "--- FAIL: ${STORM_TEST}/$rt " || true)
		echo "storm campaign: half=$half runtime=$rt pass=$pass fail=$fail"
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
