#!/usr/bin/env bash
# install-deps.sh - install what the course needs from the distribution's packages.
#
#   setup/install-deps.sh              install whatever is missing, saying what it does
#   setup/install-deps.sh --if-missing the same, silent when nothing is missing
#   setup/install-deps.sh --book       only the book's tools (with --if-missing: silently)
#   setup/install-deps.sh --watch      only inotifywait, for `make watch` (the same)
#
# Check and pkg-config come from Debian or Ubuntu packages: as root through
# apt-get, otherwise through sudo when it needs no password, otherwise into a
# local prefix (.deps/root) with `apt-get download` and `dpkg -x`, which needs
# neither root nor, when .deps/ already holds the .deb files, a network. The
# Makefile finds that prefix by itself. Check counts as installed only when
# `pkg-config --cflags --libs check` works and a program links against it, so a
# .deps/debs/ that lacks a package is named as such, not blamed on the
# exercises. The CUDA toolkit and driver are not installed here (they come from
# NVIDIA); when missing, this says what to get.
# python3, which the grader (make grade) needs, comes as root or through sudo;
# without either, this says how and carries on, since make check does not need it.
# GNU patch, which make test needs (the known mistakes are patches against the
# solutions), comes like Check: as root, or into .deps/root without it.
#
# The book (`make book`) needs pandoc (2.17 or later), Graphviz and gnuplot, from the same
# packages, as root or through sudo: with no way to install them, --book stops with the
# command to run as root, and a plain run (`make deps`) says so but still succeeds, since
# exercises and tests do not need them. `make check` and `make test` run --if-missing alone:
# Check only. inotifywait (Debian's inotify-tools) is installed like Check, into .deps/ without
# root; a plain run installs it when it can, `make watch` (--watch) insists.
set -euo pipefail
# Its folder without a dirname process (make check counts the processes it starts).
here=${0%/*}
[[ $here == "$0" ]] && here=.
cd "$here/.."

quiet=false
want_check=true
want_book=maybe  # plain run: install the book's tools if possible; --book: must
want_watch=maybe # the same for inotifywait; --watch: must
for arg in "$@"; do
    case $arg in
    --if-missing) quiet=true ;;
    --book) want_check=false want_book=must want_watch=no ;;
    --watch) want_check=false want_book=no want_watch=must ;;
    *) echo "usage: $0 [--if-missing] [--book | --watch]" >&2; exit 2 ;;
    esac
done
[[ $quiet == true && $want_book == maybe ]] && want_book=no
[[ $quiet == true && $want_watch == maybe ]] && want_watch=no

say() { $quiet || echo "deps: $*"; }
die() { echo "deps: $*" >&2; exit 1; }

PACKAGES=(check libsubunit-dev libsubunit0 pkg-config)
BOOK_PACKAGES=(pandoc graphviz gnuplot-nox chromium fonts-noto-cjk) # chromium: the self-test lays the book out;
# fonts-noto-cjk: the Chinese edition's characters, on screen and in its PDF
WATCH_PACKAGES=(inotify-tools)
# What `apt-get download` fetches for a local install: apt-get download resolves no dependencies.
LOCAL_CHECK_PACKAGES=(check libsubunit-dev libsubunit0)
LOCAL_WATCH_PACKAGES=(inotify-tools libinotifytools0)
PATCH_PACKAGES=(patch)
CHECK_VERSION='check >= 0.13'
DEPS_DIR=.deps
LOCAL_ROOT=$DEPS_DIR/root
PKG_CONFIG=${PKG_CONFIG:-pkg-config}

cuda_home() {
    local nvcc
    nvcc=$(command -v nvcc 2>/dev/null || true)
    local home=${CUDA_HOME:-${CUDA_PATH:-${nvcc:+${nvcc%/bin/nvcc}}}}
    echo "${home:-/usr/local/cuda}"
}

check_cuda() {
    local home
    home=$(cuda_home)
    if [[ ! -f $home/include/cuda_runtime_api.h ]]; then
        die "the CUDA toolkit was not found (looked for $home/include/cuda_runtime_api.h).
      Install it from NVIDIA (https://developer.nvidia.com/cuda-downloads, or your
      distribution's nvidia-cuda-toolkit package), then point CUDA_HOME at it if it is
      not in /usr/local/cuda or on the PATH."
    fi
    # CUDA 13 changed cudaMemPrefetchAsync and cudaMemAdvise to take a struct cudaMemLocation,
    # which chapter 4, its exercises and the harness's wrappers of them are written for.
    local version='' line
    while IFS= read -r line; do # near the top of the header: read by the shell, no process
        if [[ $line =~ ^#define\ +CUDART_VERSION\ +([0-9]+) ]]; then
            version=${BASH_REMATCH[1]}
            break
        fi
    done <"$home/include/cuda_runtime_api.h"
    if [[ -n $version && $version -lt 13000 ]]; then
        die "the CUDA toolkit in $home is version $((version / 1000)).$((version % 1000 / 10)); the
      course needs CUDA 13 or later (chapter 4's calls take CUDA 13's struct cudaMemLocation).
      Install a newer toolkit from NVIDIA (https://developer.nvidia.com/cuda-downloads) and
      point CUDA_HOME at it if it is not in /usr/local/cuda or on the PATH."
    fi
}

# --- Installing as root -----------------------------------------------------------------------

# Sets `as_root` to what runs a command as root: nothing when this is root, `sudo -n` when sudo
# needs no password. Returns 1 when there is neither, or no apt-get to run.
can_install() {
    command -v apt-get >/dev/null 2>&1 || return 1
    if [[ $(id -u) -eq 0 ]]; then
        as_root=()
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        as_root=(sudo -n)
    else
        return 1
    fi
}

# apt_install PACKAGE...: quiet when it works (debconf's chatter included); apt-get's own
# words when it does not. Call can_install first.
apt_install() {
    local -a apt=("${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -y -q)
    local log
    log=$("${apt[@]}" install --no-install-recommends "$@" 2>&1) && return 0
    # The package lists may be stale, or missing altogether in a fresh container: update, retry.
    log=$("${apt[@]}" update 2>&1) && log=$("${apt[@]}" install --no-install-recommends "$@" 2>&1) &&
        return 0
    echo "deps: apt-get install $* failed:" >&2
    grep -v '^debconf: ' <<<"$log" | tail -n 8 | sed 's/^/      /' >&2
    return 1
}

# ensure LABEL TEST PACKAGE...: true when TEST passes, or once the packages, installed as root
# or through sudo, make it pass; says which. Otherwise false, with `missing_because` saying why
# (before announcing an install it cannot make).
ensure() {
    local label=$1 test=$2
    shift 2
    if $test; then
        say "$label: installed"
        return 0
    fi
    if ! can_install; then
        missing_because="installing needs root, or sudo without a password"
        command -v apt-get >/dev/null 2>&1 || missing_because="this is not a Debian or Ubuntu system"
        return 1
    fi
    local how=${as_root[*]:+ with sudo}
    echo "deps: $label: missing; installing $*${how}"
    if ! apt_install "$@"; then
        missing_because="apt-get failed (see above)"
        return 1
    fi
    if ! $test; then
        missing_because="it still does not work with $* installed"
        return 1
    fi
    echo "deps: $label: installed $*${how}"
}

# --- Installing without root, into .deps/root -------------------------------------------------

unpack_local() {
    compgen -G "$DEPS_DIR/debs/*.deb" >/dev/null || return 1
    mkdir -p "$LOCAL_ROOT"
    for deb in "$DEPS_DIR"/debs/*.deb; do
        dpkg -x "$deb" "$LOCAL_ROOT"
    done
}

# download_local PACKAGE...: into .deps/debs/, or apt-get's own error and no empty folder left.
download_local() {
    command -v apt-get >/dev/null 2>&1 || return 1
    local created=
    [[ -d $DEPS_DIR/debs ]] || created=yes
    mkdir -p "$DEPS_DIR/debs"
    local log
    log=$(cd "$DEPS_DIR/debs" && apt-get download "$@" 2>&1) && return 0
    [[ -z $created ]] || { rmdir "$DEPS_DIR/debs" && rmdir "$DEPS_DIR"; } 2>/dev/null || true
    echo "deps: apt-get download $* failed:" >&2
    { grep '^E: ' <<<"$log" || tail -n 4 <<<"$log"; } | head -n 6 | sed 's/^/      /' >&2
    if grep -qiE 'unable to locate|no candidate|has no installation' <<<"$log"; then
        echo "      (no package lists: someone with root must run apt-get update once)" >&2
    fi
    return 1
}

LOCAL_HOW="or, without root, put the packages in .deps/debs/ and run make again:
      mkdir -p .deps/debs && cd .deps/debs && apt-get download"

# --- Check ------------------------------------------------------------------------------------

# The Debian packages that hold what a pkg-config or linker message says is missing.
package_of() {
    case $1 in
    libsubunit | subunit) echo "libsubunit-dev (with libsubunit0)" ;;
    check | check_pic) echo "check" ;;
    *) echo "the one that provides $1" ;;
    esac
}

# Whether Check works as the Makefile uses it: the system's through pkg-config, else the one in
# .deps/root through its .pc file, compiled and linked against. Otherwise `check_problem` says
# why, naming the package that is missing.
have_check() {
    check_problem="Check is not installed"
    command -v "$PKG_CONFIG" >/dev/null 2>&1 || { check_problem="pkg-config is not installed"; return 1; }
    "$PKG_CONFIG" --exists "$CHECK_VERSION" 2>/dev/null && return 0
    local pc where="the system's Check"
    local -a pkg_config=("$PKG_CONFIG")
    for pc in "$LOCAL_ROOT"/usr/lib/*/pkgconfig/check.pc; do
        [[ -e $pc ]] && break
        pc=
    done
    if [[ -n $pc ]]; then
        pkg_config=(env "PKG_CONFIG_PATH=${pc%/check.pc}${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
                    "$PKG_CONFIG" "--define-variable=prefix=$PWD/$LOCAL_ROOT/usr")
        where="Check in $LOCAL_ROOT"
    fi
    local flags said missing
    if ! flags=$("${pkg_config[@]}" --cflags --libs "$CHECK_VERSION" 2>&1); then
        # pkgconf: "Package 'libsubunit', required by 'check', not found"; 'virtual:world' is
        # the command line itself, so Check alone is missing.
        missing=$(sed -n "s/^Package '\([^']*\)', required by '[^v].*/\1/p" <<<"$flags" | head -n 1)
        [[ -z $pc && -z $missing ]] && ! grep -q '^Requested' <<<"$flags" && return 1
        said=$(grep -m 1 -E "required by|^Requested" <<<"$flags" || head -n 1 <<<"$flags")
        check_problem="$where does not work: \`pkg-config --cflags --libs check\` says: $said"
        [[ -n $missing ]] && check_problem+=". The package missing is $(package_of "$missing")"
        return 1
    fi
    [[ -n $pc ]] || return 0
    # Linked against once, it links again until its .pc file changes: make check asks each time.
    local linked=$LOCAL_ROOT/.check-links
    [[ $linked -nt $pc ]] && return 0
    local scratch log
    scratch=$(mktemp -d)
    printf '#include <check.h>\nint main(void) { return suite_create("s") == NULL; }\n' >"$scratch/probe.c"
    # shellcheck disable=SC2086 # the flags are separate words
    log=$(${CC:-cc} "$scratch/probe.c" -o "$scratch/probe" $flags 2>&1)
    local status=$?
    rm -rf "$scratch"
    ((status == 0)) && { : >"$linked"; return 0; }
    missing=$(sed -n 's/.*cannot find -l\([A-Za-z0-9_]*\).*/\1/p' <<<"$log" | head -n 1)
    check_problem="$where does not link: $(grep -m 1 -E 'error|cannot find' <<<"$log")"
    [[ -n $missing ]] && check_problem+=". The package missing is $(package_of "$missing")"
    return 1
}

# Installs Check and pkg-config, or stops saying how to.
check_deps() {
    if have_check; then
        say "Check and pkg-config: installed"
        return 0
    fi
    if unpack_local && have_check; then
        echo "deps: Check: installed into $LOCAL_ROOT from the packages in $DEPS_DIR/debs/ (no root needed)"
        return 0
    fi
    local problem=$check_problem
    if ! command -v apt-get >/dev/null 2>&1; then
        die "$problem. This is not a Debian or Ubuntu system: install Check (>= 0.13) and
      pkg-config with your package manager (Fedora: dnf install check-devel pkgconf; Arch:
      pacman -S check; macOS has no CUDA), then run make again."
    fi
    echo "deps: $problem"
    if can_install; then
        echo "deps: installing ${PACKAGES[*]}${as_root[*]:+ with sudo}"
        apt_install "${PACKAGES[@]}" && have_check &&
            { echo "deps: Check: installed ${PACKAGES[*]}${as_root[*]:+ with sudo}"; return 0; }
        problem=$check_problem
    elif command -v "$PKG_CONFIG" >/dev/null 2>&1; then
        echo "deps: installing Check into $LOCAL_ROOT (apt-get download, dpkg -x: no root needed)"
        if download_local "${LOCAL_CHECK_PACKAGES[@]}" && unpack_local && have_check; then
            echo "deps: Check: installed into $LOCAL_ROOT, which the Makefile finds by itself"
            return 0
        fi
        problem=$check_problem
    fi
    die "could not install Check: $problem. Run, as root:
      apt-get install ${PACKAGES[*]}
  $LOCAL_HOW ${LOCAL_CHECK_PACKAGES[*]}"
}

# --- The rest: python3, the book's tools, inotifywait ------------------------------------------

# Python 3, its standard library alone, runs the grader (make grade) and its part of make test.
# Not needed for make check, so failing to install it only says so.
python_deps() {
    have_python() { command -v python3 >/dev/null 2>&1; }
    ensure "python3 (for make grade)" have_python python3 && return 0
    echo "deps: python3 is missing and $missing_because, so \`make grade\` will not work.
      Run, as root: apt-get install python3" >&2
}

# GNU patch, for make test: the known mistakes (mutants/) are patches the Makefile applies. Not
# needed for make check, so failing to install it only says so.
have_patch() { command -v patch >/dev/null 2>&1 || [[ -x $LOCAL_ROOT/usr/bin/patch ]]; }

patch_deps() {
    # From .deps/debs first, where it is there: no root, and no network, needed.
    if ! have_patch && unpack_local && have_patch; then
        echo "deps: patch: installed into $LOCAL_ROOT from the packages in $DEPS_DIR/debs/"
        return 0
    fi
    ensure "patch (for make test)" have_patch "${PATCH_PACKAGES[@]}" && return 0
    if [[ $missing_because == *root* ]]; then
        if download_local "${PATCH_PACKAGES[@]}" && unpack_local && have_patch; then
            echo "deps: patch: installed into $LOCAL_ROOT, where the Makefile finds it"
            return 0
        fi
        missing_because="it could not be fetched (see above)"
    fi
    echo "deps: patch is missing and $missing_because, so \`make test\` cannot build the known
      mistakes. Run, as root: apt-get install ${PATCH_PACKAGES[*]}
  $LOCAL_HOW ${PATCH_PACKAGES[*]}" >&2
}

# pandoc 2.17 (Debian 12) or later, for the book's Lua filter; dot and gnuplot for its figures;
# a font with Chinese characters, for the Chinese edition.
have_book() {
    command -v dot >/dev/null 2>&1 && command -v gnuplot >/dev/null 2>&1 || return 1
    fc-list :lang=zh 2>/dev/null | grep -q . || return 1
    local version
    version=$(pandoc --version 2>/dev/null | sed -n '1s/^pandoc[^0-9]*\([0-9][0-9.]*\).*/\1/p')
    [[ -n $version ]] && printf '2.17\n%s\n' "$version" | sort -V -C
}

book_deps() {
    ensure "the book's tools (pandoc, Graphviz, gnuplot, a Chinese font)" have_book "${BOOK_PACKAGES[@]}" && return 0
    local what="the book's tools (pandoc, Graphviz, gnuplot, a Chinese font) are missing and $missing_because"
    local how="Run, as root:
      apt-get install ${BOOK_PACKAGES[*]}
  (pandoc 2.17 or later; on other systems, install pandoc, graphviz and gnuplot with
  your package manager), then run make again."
    [[ $want_book == must ]] && die "$what. $how"
    echo "deps: $what, so \`make book\` will not work. $how" >&2
}

# inotifywait runs when the dynamic loader finds its library (127: it did not).
local_inotifywait_runs() {
    [[ -x $LOCAL_ROOT/usr/bin/inotifywait ]] || return 1
    local libraries
    libraries=$(printf '%s:' "$PWD/$LOCAL_ROOT"/usr/lib/*-linux-gnu)
    local status=0
    LD_LIBRARY_PATH=${libraries%:} "$LOCAL_ROOT/usr/bin/inotifywait" --help >/dev/null 2>&1 || status=$?
    ((status != 127))
}
have_inotifywait() { command -v inotifywait >/dev/null 2>&1 || local_inotifywait_runs; }

watch_deps() {
    ensure "inotifywait (for make watch)" have_inotifywait "${WATCH_PACKAGES[@]}" && return 0
    if [[ $missing_because == *root* ]]; then
        echo "deps: inotifywait (for make watch): missing; installing it into $LOCAL_ROOT (no root needed)"
        if download_local "${LOCAL_WATCH_PACKAGES[@]}" && unpack_local && local_inotifywait_runs; then
            echo "deps: inotifywait: installed into $LOCAL_ROOT, where make watch finds it"
            return 0
        fi
        missing_because="it could not be fetched (see above)"
    fi
    local what="inotifywait, from the inotify-tools package, is missing and $missing_because"
    local how="Run, as root:
      apt-get install ${WATCH_PACKAGES[*]}
  $LOCAL_HOW ${LOCAL_WATCH_PACKAGES[*]}"
    [[ $want_watch == must ]] && die "$what. $how"
    echo "deps: $what, so \`make watch\` will not work. $how" >&2
}

# The one thing make deps cannot install: a GPU and its driver. Said last, so that a learner who
# has everything else knows what still stops the tests that need one.
gpu_line() {
    if [[ -e /proc/driver/nvidia/version ]] && command -v nvidia-smi >/dev/null &&
       gpus=$(nvidia-smi -L 2>/dev/null) && [[ -n $gpus ]]; then
        say "GPU: $(head -n 1 <<<"$gpus" | sed 's/ (UUID.*//')$( (($(wc -l <<<"$gpus") > 1)) && echo " and $(($(wc -l <<<"$gpus") - 1)) more")"
    elif grep -qsx 0x10de /sys/bus/pci/devices/*/vendor || [[ -e /proc/driver/nvidia ]]; then
        say "GPU: an NVIDIA device is here but its driver is not working, so the tests that need a GPU will not run: install NVIDIA's driver (nvidia-smi must list the GPU)"
    else
        say "GPU: none on this machine, so make check runs only the tests that need none (README.md, \"No NVIDIA GPU?\")"
    fi
}

if [[ $want_check == true ]]; then
    check_cuda
    check_deps
    python_deps
    patch_deps
fi
if [[ $want_book != no ]]; then
    book_deps
fi
if [[ $want_watch != no ]]; then
    watch_deps
fi
if [[ $want_check == true ]]; then
    gpu_line
fi
