# 10-unit.sh - host-only unit tests of common/ and the harness (no GPU needed).
section "Unit tests of common/ and the harness (host only)"

for unit_program in $($MAKE -s --no-print-directory list-unit-tests); do
    name=${unit_program#selftest/unit/}
    build "build/$unit_program" || continue
    output=$(CK_VERBOSITY=normal "build/$unit_program" 2>&1)
    status=$?
    # Check's summary: "100%: Checks: 12, Failures: 0, Errors: 0"
    read -r checks failures errors < <(sed -n 's/.*Checks: \([0-9]*\), Failures: \([0-9]*\), Errors: \([0-9]*\).*/\1 \2 \3/p' <<<"$output")
    if [[ $status -eq 0 && -n ${checks:-} && $failures -eq 0 && $errors -eq 0 ]]; then
        pass "$name: $checks checks"
    else
        fail "$name: ${failures:-?} failures, ${errors:-?} errors of ${checks:-?} checks" "$output"
    fi
done
