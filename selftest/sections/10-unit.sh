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

# The README's sample summary (roundtrip done, the rest untouched) against the course as its
# test modules say it is: the sample is a figure the course must keep true, not a copy.
summary_check="the README's sample summary is the course's: its exercises, tests and points"
if build build/tests/host $($MAKE -s --no-print-directory list-exercises | sed 's|.*|build/modules/tests/&.so|'); then
    totals=$(for exercise in $($MAKE -s --no-print-directory list-exercises); do
                 build/tests/host --module "build/modules/tests/$exercise.so" --rubric |
                     awk -F '\t' -v e="$exercise" '$1 == "test" { t++; p += $3 }
                                                  END { print e, t, p }'
             done | awk '{ n++; tests += $2; points += $3 }
                         $1 == "ch01-memory/roundtrip" { rt = $2; rp = $3 }
                         END { printf "Progress: 1 of %d exercises done, %d not started; %d of %d points\n%d passed, 0 failed\n",
                                      n, n - 1, rp, points, rt }')
    if grep -qF -- "$(head -n 1 <<<"$totals")" README.md && grep -qxF -- "$(tail -n 1 <<<"$totals")" README.md; then
        pass "$summary_check"
    else
        fail "$summary_check" "the README should say:
$totals"
    fi
fi

# The size rules of CONTRIBUTING.md: no source file over 500 lines, no function over 80.
if layout=$(python3 selftest/layout.py 2>&1); then
    pass "no source file is over 500 lines and no function over 80 (selftest/layout.py)"
else
    fail "no source file is over 500 lines and no function over 80 (selftest/layout.py)" "$layout"
fi

# The developers' GPU run says what it needs before it does anything.
if output=$(dev/verify-on-gpu.sh 2>&1); then
    fail "dev/verify-on-gpu.sh without OUT says what it needs and exits non-zero" "$output"
elif [[ $output == *"usage: dev/verify-on-gpu.sh OUT"* ]]; then
    pass "dev/verify-on-gpu.sh without OUT says what it needs and exits non-zero"
else
    fail "dev/verify-on-gpu.sh without OUT says what it needs and exits non-zero" "$output"
fi

# make measure's comparison with nvbandwidth (tools/nvbandwidth-csv.sh), against a stand-in that
# prints what nvbandwidth prints: the tests between GPUs kept where there are two, their mean per
# pair of GPUs beside their sum, and where they are waived a sentence that says so, no file.
check="tools/nvbandwidth-csv.sh keeps nvbandwidth's tests between GPUs on two GPUs and says why not on one"
measured=$(mktemp -d)
printf '# gpu: a GPU\nbytes,h2d_pinned\n1024,1.0\n' >"$measured/bandwidth.csv"
two=$(FAKE_GPUS=2 NVBANDWIDTH=selftest/fixtures/nvbandwidth/nvbandwidth \
          tools/nvbandwidth-csv.sh "$measured" 2>&1) && peer=$(grep -v '^#' "$measured/nvbandwidth_peer.csv")
one=$(FAKE_GPUS=1 NVBANDWIDTH=selftest/fixtures/nvbandwidth/nvbandwidth \
          tools/nvbandwidth-csv.sh "$measured" 2>&1)
one_status=$?
if [[ $peer == $'test,sum_gb_per_s,cells,mean_gb_per_s\ndevice_to_device_memcpy_read_ce,610.00,2,305.00\ndevice_to_device_bidirectional_memcpy_read_ce,610.00,2,305.00' ]] &&
   ((one_status == 0)) && [[ ! -e $measured/nvbandwidth_peer.csv ]] &&
   grep -q "it waived them: fewer than two GPUs" <<<"$one" && [[ -s $measured/nvbandwidth.csv ]]; then
    pass "$check"
else
    fail "$check" "two GPUs:"$'\n'"$two"$'\n'"${peer:-}"$'\n'"one GPU (exit $one_status):"$'\n'"$one"
fi
rm -rf "$measured"

# dev/gpu_lock_timeline.py reads the GPU's lock from /proc/locks: two programs share it, a timed
# test waits at the turnstile for the one still holding it, then has it alone. Meanwhile two
# programs take the first turn to make a context, the second waiting for the first; the first
# names a learner's module, as a test host does, the second nothing; so does the timed test.
check="dev/gpu_lock_timeline.py sorts the lock's time into shared, drain and alone, counting holders, and counts the turns to make contexts, and where they were begun and the GPU was had alone"
locks=$(mktemp -d)
for name in gpu-0.lock gpu-0.turnstile contexts.lock contexts-1.lock contexts-2.lock contexts-line.lock \
    contexts-front.lock; do
    : >"$locks/$name"
done
python3 dev/gpu_lock_timeline.py "$locks" 0 >"$locks/timeline.txt" 2>&1 &
timeline=$!
sleep 1 # python's start
flock -x "$locks/contexts.lock" sh -c 'sleep 0.3' --learner build/modules/mutants/x--y.so &
maker=$!
sleep 0.05
flock -x "$locks/contexts.lock" sleep 0.1 &
waiter=$!
flock -s "$locks/gpu-0.lock" sleep 0.4 &
first=$!
flock -s "$locks/gpu-0.lock" sleep 0.8 &
second=$!
sleep 0.5
flock -x "$locks/gpu-0.turnstile" flock -x "$locks/gpu-0.lock" \
    sh -c 'sleep 0.4' --learner build/modules/solutions/x.so
wait "$first" "$second" "$maker" "$waiter"
sleep 0.1
kill "$timeline"
wait "$timeline"
said=$(cat "$locks/timeline.txt")
# shared: 2 holders for 0.4 s, then 1 for 0.1 s; drain 0.3 s beside the last; alone 0.4 s. (The
# turnstile, which flock(1) holds around the window, is let go an instant after the lock: a
# second drain of a sample or two, so the longest wait is what counts.)
if awk '$1 == "alone" { alone = $2 } $1 == "drain" { drain = $2; drain_holders = $5 }
        $1 == "shared" { shared = $2; shared_holders = $5 } $1 == "drain:" { wait = $(NF - 1) }
        $1 == "context" { begun = $3; for (i = 1; i <= NF; i++) if ($i == "programs") waiting = $(i - 1) }
        END { exit !(alone >= 0.3 && alone <= 0.6 && drain >= 0.2 && drain <= 0.5 &&
                     drain_holders >= 0.8 && drain_holders <= 1.2 && shared >= 0.4 &&
                     shared_holders >= 1.5 && shared_holders <= 2.0 && wait >= 200 &&
                     wait <= 500 && begun == 2 && waiting > 0) }' <<<"$said" &&
    grep -q "contexts begun by build/modules/mutants: 1 (flock 1)" <<<"$said" &&
    grep -q "contexts begun by (not known): 1 (flock 1)" <<<"$said" &&
    grep -q "the GPU alone for build/modules/solutions: 0\.[3-6] s" <<<"$said"; then
    pass "$check"
else
    fail "$check" "$said"
fi
rm -rf "$locks"

# share_out (harness/hosts.sh) gives every exercise a host, times of nothing included: a make
# check without a GPU times its exercises at 0 s, and shared out by those, two kinds of exercise
# on four hosts, one went to host "-nan" and the next make check stopped at an unbound variable.
check="share_out gives each exercise a host among those asked for, where the times are 0 s"
times=$(mktemp)
printf '0.00 ch01-memory/roundtrip\n0.00 ch03-streams/pipeline\n0.00 ch01-memory/directions\n' >"$times"
shared=$(printf '1 ch01-memory/roundtrip\nall ch03-streams/pipeline\n1 ch01-memory/directions\n' |
         share_out 4 "$times")
if [[ $(wc -l <<<"$shared") -eq 3 ]] && awk '!($1 ~ /^[0-3]$/) { exit 1 }' <<<"$shared"; then
    pass "$check"
else
    fail "$check" "$shared"
fi
rm -f "$times"

# More groups of work queues than hosts: the exercises of one queue keep hosts of their own, and
# those of 2 and 4 join the group above them, never the other way (on two hosts, a worker of the
# driver's 8 queues for the exercises of one stream would cost every context beside it).
check="share_out keeps the exercises of one work queue apart where there are more groups than hosts"
shared=$(printf '1 a\n2 b\nall c\n4 d\n1 e\n' | share_out 2 /dev/null)
three=$(printf '1 a\n2 b\nall c\n4 d\n1 e\n' | share_out 3 /dev/null)
# On 2 hosts: a and e on one, b, c and d on the other; on 3: b and d together, c apart.
if awk '{ h[$2] = $1 } END { exit !(h["a"] == h["e"] && h["b"] == h["c"] && h["c"] == h["d"] &&
                                    h["a"] != h["b"]) }' <<<"$shared" &&
   awk '{ h[$2] = $1 } END { exit !(h["b"] == h["d"] && h["b"] != h["c"] && h["a"] != h["c"]) }' \
       <<<"$three"; then
    pass "$check"
else
    fail "$check" "on 2 hosts:"$'\n'"$shared"$'\n'"on 3:"$'\n'"$three"
fi
