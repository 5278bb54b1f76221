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
say() { $quiet || echo "deps: $*"; }

LOCAL_ROOT=.deps/root
have_bwrap() { command -v bwrap >/dev/null 2>&1 || [[ -x $LOCAL_ROOT/usr/bin/bwrap ]]; }
# The bindings belong to the python3 that writes the filter, the system's (a virtual
# environment's, first on the PATH, has no python3-seccomp): the grader says which it runs.
python=$(python3 -c 'import sys; sys.path.insert(0, "grader"); import sandbox
print(sandbox.python_for_everyone())' 2>/dev/null) || python=/usr/bin/python3
seccomp_import() { # what the system's python3 says when it imports seccomp
    PYTHONPATH=$LOCAL_ROOT/usr/lib/python3/dist-packages "$python" -c 'import seccomp' 2>&1
}
have_seccomp() { seccomp_import >/dev/null; }
# One line of a failed command's output, the reason it gives: apt's "E: ..." line, or its last.
reason() { grep -m 1 '^E: ' <<<"$1" || grep . <<<"$1" | tail -n 1 || echo "no reason given"; }
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
# without --if-missing (make deps does) to try again at once. The file holds what was missing,
# then why the try failed.
failed_before=.deps/grade-deps-failed
why=
if $quiet && ((${#still[@]} > 0)) && [[ -n $(find "$failed_before" -mmin -1440 2>/dev/null) ]] &&
   [[ $(head -n 1 "$failed_before") == "${still[*]}" ]]; then
    why="$(sed -n 2p "$failed_before") (within the last day; make deps tries again)"
    still=()
fi
if ((${#still[@]} > 0)); then
    echo "deps: installing ${still[*]} (make grade confines submissions with them)"
    if [[ $(id -u) -eq 0 ]]; then
        said=$(apt-get install -y "${still[@]}" 2>&1) ||
            { apt-get update >/dev/null 2>&1 && said=$(apt-get install -y "${still[@]}" 2>&1); } ||
            why="apt-get install ${still[*]} failed: $(reason "$said")"
    elif sudo -n true 2>/dev/null; then
        said=$(sudo -n apt-get install -y "${still[@]}" 2>&1) ||
            why="sudo apt-get install ${still[*]} failed: $(reason "$said")"
    else
        mkdir -p .deps/debs "$LOCAL_ROOT"
        said=$(cd .deps/debs && apt-get download "${still[@]}" 2>&1) ||
            why="not root and no sudo, and apt-get download ${still[*]} failed: $(reason "$said")"
        for package in "${still[@]}"; do
            deb=$(ls -t .deps/debs/"${package}"_*.deb 2>/dev/null | head -n 1 || true)
            [[ -n $deb ]] && dpkg -x "$deb" "$LOCAL_ROOT"
        done
    fi
fi
mapfile -t missing < <(missing_now)
if ((${#missing[@]} > 0)); then
    mkdir -p .deps && printf '%s\n%s\n' "${missing[*]}" "${why:-installed, yet not found}" >"$failed_before"
else
    rm -f "$failed_before"
fi
# What to do about a package still missing, where the reason leaves something to do: as root,
# apt was run and its reason says what failed.
what_to_do() {
    if [[ $(id -u) -eq 0 ]]; then
        echo "deps: without network, put $1's .deb in .deps/debs/ and run make deps" >&2
    else
        echo "deps: as root, run apt-get install $1" >&2
    fi
}
if ! have_bwrap; then
    echo "deps: bubblewrap is missing, so make grade cannot confine submissions: ${why:-it is not installed}" >&2
    what_to_do bubblewrap
    exit 1
fi
if ! have_seccomp; then
    echo "deps: python3-seccomp could not be installed, so make grade runs without its system call filter: ${why:-it is not installed}" >&2
    echo "deps: $python cannot import seccomp: $(reason "$(seccomp_import)")" >&2
fi
exit 0
