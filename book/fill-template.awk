# fill-template.awk - fills the @key@ fields of a template with values from a summary.csv.
#
#   awk -f book/fill-template.awk SUMMARY.csv TEMPLATE > OUT
#
# Bandwidths are rounded for a picture (55.2, 4 210), memory_total_gb and _gib are derived from
# memory_total_bytes, and pcie_link / pcie_theory say what is known of the link. A field with
# no value stops it with a message naming the field (exit 1).
BEGIN { FS = "," }
FNR == NR {
    if ($0 !~ /^#/ && $1 != "key") {
        key = $1
        value = substr($0, length($1) + 2)
        values[key] = value
    }
    next
}
FNR == 1 {
    for (key in values) {
        if (key ~ /_gb_per_s$/)
            values[key] = values[key] + 0 >= 1000 ? thousands(sprintf("%.0f", values[key])) : sprintf("%.1f", values[key])
    }
    values["memory_total_gb"] = sprintf("%.0f", values["memory_total_bytes"] / 1e9)
    values["memory_total_gib"] = sprintf("%.1f", values["memory_total_bytes"] / 2^30)
    if ("pcie_generation" in values) {
        values["pcie_link"] = "Gen" values["pcie_generation"] " x" values["pcie_lanes"]
        values["pcie_theory"] = values["pcie_gb_per_s"] " GB/s each way in theory"
    } else {
        values["pcie_link"] = ""
        values["pcie_theory"] = "(NVML did not report its generation and width)"
    }
}
{
    line = $0
    while (match(line, /@[a-z0-9_]+@/)) {
        key = substr(line, RSTART + 1, RLENGTH - 2)
        if (!(key in values)) {
            printf "fill-template: %s has no value '%s' for %s\n", ARGV[1], key, FILENAME > "/dev/stderr"
            failed = 1
            exit 1
        }
        out = out substr(line, 1, RSTART - 1) html(values[key])
        line = substr(line, RSTART + RLENGTH)
    }
    print out line
    out = ""
}
END { exit failed }
function thousands(s) {
    while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($| )/, " &", s)
    return s
}
function html(s) {
    gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s)
    return s
}
