# hosts.sh - sourced: how make check (harness/check.sh) and the self-test's exercises section
# share their exercises out among the test hosts they run side by side.

# share_out HOSTS TIMES: reads lines "GROUP NAME" and prints "HOST NAME" for each, HOST from 0
# to HOSTS - 1. Each group has hosts of its own, as many as its share of the time (one at
# least, where there are hosts enough), and within a group the longest go first, by TIMES
# (lines "SECONDS NAME" from the last run; # starts a comment), each to the host with the least
# to do so far. A name TIMES does not hold counts a second and goes first, in the order read;
# one it gives no time (a run without a GPU takes none) counts a hundredth of a second.
# The groups are the work queues the exercises' code needs (queue_group: 1, 2, 4, all): a host
# makes its worker's context with the most of its exercises' queues, the driver's 8 where one
# names none (harness/host/runner.c), so exercises of one stream keep a context of one queue.
# Where there are more groups than hosts, those of the fewest queues but one join the group
# above them.
share_out() {
    awk 'FILENAME == ARGV[1] { if (!/^#/) took[$2] = $1; next }
         { print ($2 in took ? took[$2] : 1e9 - FNR), $1, $2 }' "$2" - |
        sort -k1,1gr |
        awk -v hosts="$1" '
            { weight[NR] = $1 >= 1e8 ? 1 : $1 < 0.01 ? 0.01 : $1; group[NR] = $2; name[NR] = $3
              if (!($2 in seen)) order[++groups] = $2
              seen[$2] = 1; all += weight[NR] }
            # A group of work queues: its count, "all" the most.
            function queues(g) { return g == "all" ? 1e9 : g + 0 }
            END {
                # More groups than hosts (groups > hosts >= 2): the fewest queues keep a group of
                # their own, and the next fewest join the group above them, whose host takes the
                # most of its exercises: a context of 4 for an exercise of 2, never of 8 for all.
                for (i = 2; i <= groups; i++)
                    for (j = i; j > 1 && queues(order[j - 1]) > queues(order[j]); j--) {
                        g = order[j]; order[j] = order[j - 1]; order[j - 1] = g
                    }
                merged = hosts >= 2 && groups > hosts ? groups - hosts : 0
                for (i = 2; i <= 1 + merged; i++) into[order[i]] = order[2 + merged]
                groups -= merged
                for (i = 1; i <= NR; i++) {
                    if (group[i] in into) group[i] = into[group[i]]
                    total[group[i]] += weight[i]
                }
                for (g in total) {
                    size[g] = groups > hosts ? hosts : int(hosts * total[g] / all + 0.5)
                    if (size[g] < 1) size[g] = 1
                    used += size[g]
                }
                while (groups <= hosts && used > hosts) {
                    most = ""
                    for (g in size) if (size[g] > 1 && (most == "" || size[g] > size[most])) most = g
                    size[most]--; used--
                }
                while (groups <= hosts && used < hosts) {
                    most = ""
                    for (g in size) if (most == "" || total[g] / size[g] > total[most] / size[most]) most = g
                    size[most]++; used++
                }
                first = 0
                for (g in size) { base[g] = groups > hosts ? 0 : first; first += size[g] }
                for (i = 1; i <= NR; i++) {
                    g = group[i]; h = base[g]
                    for (j = base[g] + 1; j < base[g] + size[g]; j++) if (load[j] < load[h]) h = j
                    load[h] += weight[i]
                    print h, name[i]
                }
            }'
}

# queue_group [--untimed] NAME...: "GROUP NAME" for each exercise or program (chNN-slug/NAME, or
# a tree before it), GROUP the hardware work queues its worker's context is made with
# (harness.h, COURSE_EXERCISE_WORK_QUEUES): the number its tests name, or "all" (the
# environment's) where they name none or, run with its timed tests (without --untimed), say
# COURSE_EXERCISE_TIMED_WITH_ALL_QUEUES. A host takes the most of its exercises'
# (harness/host/runner.c), so a host of one group makes no context larger than its group's.
queue_group() {
    local -A queues=()
    local exercise count name untimed=0
    [[ ${1:-} == --untimed ]] && untimed=1 && shift
    while read -r exercise count; do
        queues[$exercise]=$count
    done < <(awk -v untimed=$untimed '
                 FNR == 1 { name = FILENAME; sub(/^tests\//, "", name); sub(/\.c$/, "", name) }
                 /^COURSE_EXERCISE_WORK_QUEUES\([0-9]+\);/ { split($0, part, /[()]/); count[name] = part[2] }
                 /^COURSE_EXERCISE_TIMED_WITH_ALL_QUEUES;/ { all[name] = 1 }
                 END { for (name in count) if (untimed || !(name in all)) print name, count[name] }' \
                 tests/*/*.c)
    for name in "$@"; do
        if [[ $name =~ (ch[0-9][0-9]-[^/]+/[A-Za-z0-9_]+) && -n ${queues[${BASH_REMATCH[1]}]:-} ]]; then
            echo "${queues[${BASH_REMATCH[1]}]} $name"
        else
            echo "all $name"
        fi
    done
}
