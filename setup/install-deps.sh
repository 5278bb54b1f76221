#!/usr/bin/env bash
# install-deps.sh - install what the course needs from the distribution's packages.
#
#   setup/install-deps.sh              install whatever is missing, saying what it does
#   setup/install-deps.sh --if-missing the same, silent when nothing is missing
#
# Check and pkg-config come from Debian or Ubuntu packages: as root through
# apt-get, otherwise through sudo when it needs no password, otherwise into a
# local prefix (.deps/root) with `apt-get download` and `dpkg -x`, which needs
# neither root nor, when .deps/ already holds the .deb files, a network. The
# Makefile finds that prefix by itself. The CUDA toolkit and driver are not
# installed here (they come from NVIDIA); when missing, this says what to get.
set -euo pipefail
cd "$(dirname "$0")/.."

quiet=false
[[ ${1:-} == --if-missing ]] && quiet=true

say() { $quiet || echo "deps: $*"; }
die() { echo "deps: $*" >&2; exit 1; }

PACKAGES=(check libsubunit-dev libsubunit0 pkg-config)
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

apt_install() {
    local -a run=("$@")
    export DEBIAN_FRONTEND=noninteractive
    "${run[@]}" apt-get install -y --no-install-recommends "${PACKAGES[@]}" >/dev/null 2>&1 ||
        { "${run[@]}" apt-get update >/dev/null 2>&1 &&
          "${run[@]}" apt-get install -y --no-install-recommends "${PACKAGES[@]}" >/dev/null; }
}

download_local() {
    command -v apt-get >/dev/null 2>&1 || return 1
    mkdir -p "$DEPS_DIR/debs"
    (cd "$DEPS_DIR/debs" && apt-get download check libsubunit-dev libsubunit0 >/dev/null 2>&1)
}

check_cuda
if have_check; then
    say "Check and pkg-config are installed"
    exit 0
fi
echo "deps: Check (the C unit-test framework) is missing; installing it"
if unpack_local && have_check; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    die "this is not a Debian or Ubuntu system. Install Check (>= 0.13) and pkg-config with
      your package manager (Fedora: dnf install check-devel pkgconf; Arch: pacman -S check;
      macOS has no CUDA), then run make again."
fi
if [[ $(id -u) -eq 0 ]]; then
    apt_install && have_check && { say "installed ${PACKAGES[*]}"; exit 0; }
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    apt_install sudo && have_check && { say "installed ${PACKAGES[*]} with sudo"; exit 0; }
fi
if command -v "$PKG_CONFIG" >/dev/null 2>&1 && download_local && unpack_local && have_check; then
    exit 0
fi
die "could not install Check. Run, as root:
      apt-get install check libsubunit-dev pkg-config
  or, without root, put the packages in .deps/debs/ and run make again:
      mkdir -p .deps/debs && cd .deps/debs && apt-get download check libsubunit-dev libsubunit0"
