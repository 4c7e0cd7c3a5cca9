#!/usr/bin/env bash
# scripts/demo.sh: build the jitlog sample profiler, compile its demo app
# (sample/jitlog/demo/demo.cs) with mcs, and run the app under every CoreCLR
# runtime that scripts/setup.sh installed, with jitlog loaded. Shows the app's
# output and the names jitlog printed for the demo's own methods (generic
# instantiations included); the full log of each run is in bin/demo/.
#
# Environment:
#   CLRPROF_CACHE     cache directory of setup.sh (default $HOME/.cache/clrprof)
#   CLRPROF_RUNTIMES  comma-separated runtime name prefixes to run on
#                     (e.g. "netcore3,net8"); default: all
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE="${CLRPROF_CACHE:-${HOME}/.cache/clrprof}"
OUT=bin/demo
CLSID="{8A5D2C3E-1F4B-4E6A-9D7C-0B3E5F1A2C4D}" # sample/jitlog's CLSID
mkdir -p "$OUT"

echo "== building sample/jitlog (go build -buildmode=c-shared)"
go build -buildmode=c-shared -o "$OUT/libjitlog.so" ./sample/jitlog
echo "== compiling sample/jitlog/demo/demo.cs (mcs)"
mcs -nologo -target:exe -out:"$OUT/demo.exe" sample/jitlog/demo/demo.cs

wanted() {
	local name=$1
	[ -z "${CLRPROF_RUNTIMES:-}" ] && return 0
	local p
	IFS=, read -ra prefixes <<<"$CLRPROF_RUNTIMES"
	for p in "${prefixes[@]}"; do
		[[ "$name" == "$p"* ]] && return 0
	done
	return 1
}

ran=0
for root in "$CACHE"/runtimes/*/; do
	for fw in "$root"shared/Microsoft.NETCore.App/*/; do
		[ -d "$fw" ] || continue
		version=$(basename "$fw")
		case "$version" in
		[0-4].*) name="netcore$version" ;;
		*) name="net$version" ;;
		esac
		wanted "$name" || continue
		cat >"$OUT/demo.runtimeconfig.json" <<JSON
{"runtimeOptions": {"framework": {"name": "Microsoft.NETCore.App", "version": "$version"},
 "configProperties": {"System.Globalization.Invariant": true}}}
JSON
		echo
		echo "== $name: dotnet exec demo.exe with jitlog loaded"
		log="$OUT/jitlog-$name.log"
		rm -f "$log"
		env -u DOTNET_ENABLE_PROFILING \
			CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER="$CLSID" \
			CORECLR_PROFILER_PATH="$PWD/$OUT/libjitlog.so" JITLOG_FILE="$PWD/$log" \
			DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 \
			"${root}dotnet" exec --runtimeconfig "$OUT/demo.runtimeconfig.json" "$OUT/demo.exe"
		echo "-- jitlog, the demo's methods ($(grep -c '^jit: ' "$log") functions compiled in all; full log: $log):"
		grep '^jit: Demo\.' "$log"
		ran=$((ran + 1))
	done
done
if [ "$ran" -eq 0 ]; then
	echo "demo.sh: no runtime found under $CACHE/runtimes: run scripts/setup.sh (or task setup) first" >&2
	exit 1
fi
