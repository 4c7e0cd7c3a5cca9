#!/usr/bin/env bash
# scripts/reliability.sh: the long reliability suite (issue 7): the signal
# storm for STORM_SECONDS (default 30) per run, with and without the SDK's
# signal measures; exception storms; 100k-thread churn; shutdown races;
# collectible AssemblyLoadContext unload cycles; on every installed runtime.
# Then the long mcs soak (issue 13): Mono's C# compiler on .NET 8 compiling
# a generated program of SOAK_CLASSES (default 1000) classes under every
# sample profiler, the program then run on every runtime. The verbose log
# (figures for docs/reliability.md) goes to bin/reliability.log.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bin
export CLRPROF_STORM_SECONDS="${STORM_SECONDS:-30}"
export CLRPROF_CHURN_THREADS="${CHURN_THREADS:-100000}"
export CLRPROF_ALC_CYCLES="${ALC_CYCLES:-200}"
status=0
go test -count=1 -timeout 90m -v \
	-run 'TestSignalStorm|TestExceptionStorm|TestStackOverflowUnchanged|TestThreadChurn|TestShutdownRace|TestALCUnloadCycles|TestProfilerPanickingCallback|TestDeclinesBesideAnotherGoRuntime|TestGoEnvironmentNotFollowed' \
	./profiler 2>&1 | tee bin/reliability.log | grep -E '^(=== RUN|--- |    --- |ok|FAIL|PASS)|(storm|churn|events|unload|environment)_test.go:[0-9]+: (net|without|[A-Za-z0-9.]+ run)' || status=1
CLRPROF_SOAK=long CLRPROF_SOAK_CLASSES="${SOAK_CLASSES:-1000}" go test -count=1 -timeout 90m -v -run '^TestMCSSoak$' ./soak 2>&1 | tee -a bin/reliability.log |
	grep -E '^(=== RUN|--- |ok|FAIL|PASS)|mcs_integration_test.go:[0-9]+: (generated|baseline|jitlog|ilcount|cpuprof|allocprof|calltrace|attachjit|the compiled|soak)|^ +(cpuprof: wrote|allocprof: wrote|calltrace: events=)' || status=1
exit "$status"
