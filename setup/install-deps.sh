#!/usr/bin/env bash
# install-deps.sh - install what the course needs from the distribution's packages.
#
#   setup/install-deps.sh              install whatever is missing, saying what it does
#   setup/install-deps.sh --if-missing the same, silent when nothing is missing
#   setup/install-deps.sh --book       only the book's tools (with --if-missing: silently)
#
# Check and pkg-config come from Debian or Ubuntu packages: as root through
# apt-get, otherwise through sudo when it needs no password, otherwise into a
# local prefix (.deps/root) with `apt-get download` and `dpkg -x`, which needs
# neither root nor, when .deps/ already holds the .deb files, a network. The
# Makefile finds that prefix by itself. The CUDA toolkit and driver are not
# installed here (they come from NVIDIA); when missing, this says what to get.
# python3, which the grader (make grade) needs, comes as root or through sudo;
# without either, this says how and carries on, since make check does not need it.
#
# The book (`make book`) needs pandoc (2.17 or later), Graphviz and gnuplot, from the same
# packages, as root or through sudo: with no way to install them, --book stops with the
# command to run as root, and a plain run (`make deps`) says so but still succeeds, since
# exercises and tests do not need them. `make check` and `make test` run --if-missing alone:
# Check only.
set -euo pipefail
cd "$(dirname "$0")/.."

quiet=false
want_check=true
want_book=maybe # plain run: install the book's tools if possible; --book: must
for arg in "$@"; do
    case $arg in
    --if-missing) quiet=true ;;
    --book) want_check=false want_book=must ;;
    *) echo "usage: $0 [--if-missing] [--book]" >&2; exit 2 ;;
    esac
done
[[ $quiet == true && $want_book == maybe ]] && want_book=no

say() { $quiet || echo "deps: $*"; }
die() { echo "deps: $*" >&2; exit 1; }

PACKAGES=(check libsubunit-dev libsubunit0 pkg-config)
BOOK_PACKAGES=(pandoc graphviz gnuplot-nox chromium) # chromium: the self-test lays the book out
DEPS_DIR=.deps
LOCAL_ROOT=$DEPS_DIR/root
PKG_CONFIG=${PKG_CONFIG:-pkg-config}

cuda_home() {
    local nvcc
    nvcc=$(command -v nvcc 2>/dev/null || true)
    echo "${CUDA_HOME:-${CUDA_PATH:-${nvcc:+${nvcc%/bin/nvcc}}}}" | sed 's|^$|/usr/local/cuda|'
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
}

have_check() {
    command -v "$PKG_CONFIG" >/dev/null 2>&1 || return 1
    "$PKG_CONFIG" --exists 'check >= 0.13' 2>/dev/null && return 0
    compgen -G "$LOCAL_ROOT/usr/lib/*/pkgconfig/check.pc" >/dev/null
}

unpack_local() {
    compgen -G "$DEPS_DIR/debs/*.deb" >/dev/null || return 1
    mkdir -p "$LOCAL_ROOT"
    for deb in "$DEPS_DIR"/debs/*.deb; do
        dpkg -x "$deb" "$LOCAL_ROOT"
    done
    say "unpacked $(ls "$DEPS_DIR"/debs/*.deb | wc -l) packages into $LOCAL_ROOT (no root needed)"
}

# apt_install [sudo]: installs PACKAGES (or the packages in $install, when set).
apt_install() {
    local -a run=("$@") packages=("${PACKAGES[@]}")
    [[ -n ${install:-} ]] && read -ra packages <<<"$install"
    export DEBIAN_FRONTEND=noninteractive
    "${run[@]}" apt-get install -y --no-install-recommends "${packages[@]}" >/dev/null 2>&1 ||
        { "${run[@]}" apt-get update >/dev/null 2>&1 &&
          "${run[@]}" apt-get install -y --no-install-recommends "${packages[@]}" >/dev/null; }
}

download_local() {
    command -v apt-get >/dev/null 2>&1 || return 1
    mkdir -p "$DEPS_DIR/debs"
    (cd "$DEPS_DIR/debs" && apt-get download check libsubunit-dev libsubunit0 >/dev/null 2>&1)
}

# pandoc 2.17 (Debian 12) or later, for the book's Lua filter; dot and gnuplot for its figures.
have_book() {
    command -v dot >/dev/null 2>&1 && command -v gnuplot >/dev/null 2>&1 || return 1
    local version
    version=$(pandoc --version 2>/dev/null | sed -n '1s/^pandoc[^0-9]*\([0-9][0-9.]*\).*/\1/p')
    [[ -n $version ]] && printf '2.17\n%s\n' "$version" | sort -V -C
}

book_deps() {
    have_book && { say "pandoc, Graphviz and gnuplot are installed"; return 0; }
    echo "deps: the book's tools (pandoc, Graphviz, gnuplot) are missing; installing them"
    if command -v apt-get >/dev/null 2>&1; then
        if [[ $(id -u) -eq 0 ]]; then
            install="${BOOK_PACKAGES[*]}" apt_install && have_book &&
                { say "installed ${BOOK_PACKAGES[*]}"; return 0; }
        elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            install="${BOOK_PACKAGES[*]}" apt_install sudo && have_book &&
                { say "installed ${BOOK_PACKAGES[*]} with sudo"; return 0; }
        fi
    fi
    local how="Run, as root:
      apt-get install ${BOOK_PACKAGES[*]}
  (pandoc 2.17 or later; on other systems, install pandoc, graphviz and gnuplot with
  your package manager), then run make again."
    [[ $want_book == must ]] && die "could not install the book's tools. $how"
    echo "deps: could not install the book's tools, so \`make book\` will not work. $how" >&2
    return 0
}

# Installs Check and pkg-config, or stops saying how to.
check_deps() {
    if have_check; then
        say "Check and pkg-config are installed"
        return 0
    fi
    echo "deps: Check (the C unit-test framework) is missing; installing it"
    if unpack_local && have_check; then
        return 0
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        die "this is not a Debian or Ubuntu system. Install Check (>= 0.13) and pkg-config with
      your package manager (Fedora: dnf install check-devel pkgconf; Arch: pacman -S check;
      macOS has no CUDA), then run make again."
    fi
    if [[ $(id -u) -eq 0 ]]; then
        apt_install && have_check && { say "installed ${PACKAGES[*]}"; return 0; }
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        apt_install sudo && have_check && { say "installed ${PACKAGES[*]} with sudo"; return 0; }
    fi
    if command -v "$PKG_CONFIG" >/dev/null 2>&1 && download_local && unpack_local && have_check; then
        return 0
    fi
    die "could not install Check. Run, as root:
      apt-get install check libsubunit-dev pkg-config
  or, without root, put the packages in .deps/debs/ and run make again:
      mkdir -p .deps/debs && cd .deps/debs && apt-get download check libsubunit-dev libsubunit0"
}

# Python 3, its standard library alone, runs the grader (make grade) and its part of make test.
# Not needed for make check, so failing to install it only says so.
python_deps() {
    command -v python3 >/dev/null 2>&1 && { say "python3 is installed"; return 0; }
    echo "deps: python3 is missing (make grade and its self-test need it); installing it"
    if command -v apt-get >/dev/null 2>&1; then
        if [[ $(id -u) -eq 0 ]]; then
            install=python3 apt_install && command -v python3 >/dev/null 2>&1 &&
                { say "installed python3"; return 0; }
        elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            install=python3 apt_install sudo && command -v python3 >/dev/null 2>&1 &&
                { say "installed python3 with sudo"; return 0; }
        fi
    fi
    echo "deps: could not install python3, so \`make grade\` will not work. Run, as root:
      apt-get install python3" >&2
    return 0
}

if [[ $want_check == true ]]; then
    check_cuda
    check_deps
    python_deps
fi
if [[ $want_book != no ]]; then
    book_deps
fi
