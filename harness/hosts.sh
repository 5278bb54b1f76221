# hosts.sh - sourced: how make check (harness/check.sh) and the self-test's exercises section
# share their exercises out among the test hosts they run side by side.

# share_out HOSTS TIMES: reads names, one a line, and prints "HOST NAME" for each, HOST from 0
# to HOSTS - 1: the longest first, by TIMES (lines "SECONDS NAME" from the last run), each to
# the host with the least to do so far. A name TIMES does not hold counts a second and goes
# first, in the order read.
share_out() {
    awk 'FILENAME == ARGV[1] { took[$2] = $1; next }
         { print ($0 in took ? took[$0] : 1e9 - FNR), $0 }' "$2" - |
        sort -k1,1gr |
        awk -v hosts="$1" '{ h = 0
             for (i = 1; i < hosts; i++) if (load[i] < load[h]) h = i
             load[h] += ($1 >= 1e8 ? 1 : $1); print h, $2 }'
}
