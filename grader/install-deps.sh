#!/usr/bin/env bash
# install-deps.sh - what make grade needs beyond the course: bubblewrap, and libseccomp's
# Python bindings for its system call filter (grader/README.md, Security).
#
#   grader/install-deps.sh              install whatever is missing, saying what it does
#   grader/install-deps.sh --if-missing the same, silent when nothing is missing
#
# As root through apt-get, otherwise through sudo when it needs no password,
# otherwise into the course's local prefix (.deps/root, as setup/install-deps.sh
# does for Check) with `apt-get download` and `dpkg -x`: the grader looks there too.
# Without root, bubblewrap still needs a kernel that lets users make namespaces.
set -euo pipefail
cd "$(dirname "$0")/.."

quiet=false
[[ ${1:-} == --if-missing ]] && quiet=true
say() { $quiet || echo "grade-deps: $*"; }

LOCAL_ROOT=.deps/root
have_bwrap() { command -v bwrap >/dev/null 2>&1 || [[ -x $LOCAL_ROOT/usr/bin/bwrap ]]; }
have_seccomp() {
    PYTHONPATH=$LOCAL_ROOT/usr/lib/python3/dist-packages /usr/bin/python3 -c 'import seccomp' \
        >/dev/null 2>&1
}
missing_now() { # the packages still missing, a word each
    have_bwrap || echo bubblewrap
    have_seccomp || echo python3-seccomp
}
mapfile -t missing < <(missing_now)
if ((${#missing[@]} == 0)); then
    say "bubblewrap and python3-seccomp are installed"
    exit 0
fi
# Packages already downloaded into .deps/debs/ (a machine without network) are unpacked first.
for package in "${missing[@]}"; do
    deb=$(ls -t .deps/debs/"${package}"_*.deb 2>/dev/null | head -n 1 || true)
    [[ -n $deb ]] && mkdir -p "$LOCAL_ROOT" && dpkg -x "$deb" "$LOCAL_ROOT"
done
mapfile -t still < <(missing_now)
# An install that failed (no network, no such package for this python3) is not tried again by
# every make grade for a day: each try can wait seconds for a package server. Run this script
# without --if-missing (make deps does) to try again at once.
failed_before=.deps/grade-deps-failed
if $quiet && ((${#still[@]} > 0)) && [[ -n $(find "$failed_before" -mmin -1440 2>/dev/null) ]] &&
   [[ $(cat "$failed_before") == "${still[*]}" ]]; then
    still=()
fi
if ((${#still[@]} > 0)); then
    echo "grade-deps: installing ${still[*]} (make grade confines submissions with them)"
    if [[ $(id -u) -eq 0 ]]; then
        apt-get install -y "${still[@]}" >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 &&
            apt-get install -y "${still[@]}" >/dev/null 2>&1; } || true
    elif sudo -n true 2>/dev/null; then
        sudo -n apt-get install -y "${still[@]}" >/dev/null 2>&1 || true
    else
        mkdir -p .deps/debs "$LOCAL_ROOT"
        (cd .deps/debs && apt-get download "${still[@]}" >/dev/null 2>&1) || true
        for package in "${still[@]}"; do
            deb=$(ls -t .deps/debs/"${package}"_*.deb 2>/dev/null | head -n 1 || true)
            [[ -n $deb ]] && dpkg -x "$deb" "$LOCAL_ROOT"
        done
    fi
fi
mapfile -t missing < <(missing_now)
if ((${#missing[@]} > 0)); then
    mkdir -p .deps && echo "${missing[*]}" >"$failed_before"
else
    rm -f "$failed_before"
fi
# bubblewrap is what confines submissions; the system call filter is a second wall, so
# without python3-seccomp grading goes on and its sandbox line says the filter is missing.
if ! have_bwrap; then
    echo "grade-deps: bubblewrap could not be installed: as root, run apt-get install bubblewrap" >&2
    exit 1
fi
if ! have_seccomp; then
    echo "grade-deps: python3-seccomp could not be installed (or does not fit this python3), so" \
        "make grade runs without its system call filter: as root, run apt-get install" \
        "python3-seccomp" >&2
fi
exit 0
