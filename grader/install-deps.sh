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
missing=()
have_bwrap || missing+=(bubblewrap)
have_seccomp || missing+=(python3-seccomp)
if ((${#missing[@]} == 0)); then
    say "bubblewrap and python3-seccomp are installed"
    exit 0
fi
echo "grade-deps: installing ${missing[*]} (make grade confines submissions with them)"
if [[ $(id -u) -eq 0 ]]; then
    apt-get install -y "${missing[@]}" >/dev/null || { apt-get update >/dev/null &&
        apt-get install -y "${missing[@]}" >/dev/null; }
elif sudo -n true 2>/dev/null; then
    sudo -n apt-get install -y "${missing[@]}" >/dev/null
else
    mkdir -p .deps/debs "$LOCAL_ROOT"
    (cd .deps/debs && apt-get download "${missing[@]}" >/dev/null)
    for package in "${missing[@]}"; do
        dpkg -x "$(ls -t .deps/debs/"${package}"_*.deb | head -n 1)" "$LOCAL_ROOT"
    done
fi
have_bwrap && have_seccomp || {
    echo "grade-deps: ${missing[*]} could not be installed: as root, run apt-get install ${missing[*]}" >&2
    exit 1
}
