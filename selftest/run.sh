#!/usr/bin/env bash
# run.sh - `make test`, the course's own test suite.
#
# Runs each section in selftest/sections/ in order (host-only unit tests, the
# harness's behaviour, exercises against their solutions, stubs and mutants,
# chapter programs, and whatever later sections add). Without a GPU the GPU
# checks are skipped, each with a line saying so; REQUIRE_GPU=1 makes them
# failures. The last line is "N passed, N failed" (", N skipped").
# SECTIONS="30 40" runs only the sections whose file names start so (for work on one part).
set -uo pipefail
cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}
export NO_COLOR=${NO_COLOR:-}
source selftest/lib.sh

if ! $MAKE -s --no-print-directory build/tools/gpu_probe build/tools/report_block build/lib/libharness.a \
        build/lib/libcommon.a; then
    echo "make test: the course's libraries did not build" >&2
    echo "0 passed, 1 failed"
    exit 1
fi

started=$EPOCHREALTIME
for section_file in selftest/sections/*.sh; do
    if [[ -n ${SECTIONS:-} ]]; then
        wanted=0
        for prefix in $SECTIONS; do [[ $(basename "$section_file") == "$prefix"* ]] && wanted=1; done
        ((wanted)) || continue
    fi
    section_started=$EPOCHREALTIME
    source "$section_file"
    printf '  (%s: %.1f s)\n' "$(basename "$section_file" .sh)" "$(seconds_since "$section_started")"
done
printf '\n(make test took %.1f s)\n' "$(seconds_since "$started")"

echo
line="$passed passed, $failed failed"
((skipped > 0)) && line+=", $skipped skipped"
echo "$line"
((failed == 0 && passed > 0))
