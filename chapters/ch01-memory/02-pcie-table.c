/* 02-pcie-table.c - what a PCIe link can carry, by generation and width, from first principles.
 *
 * Each lane is one serial wire pair per direction, running at the
 * generation's transfer rate (GT/s: 10^9 transfers of one bit). Since
 * generation 3, every 130 bits on the wire carry 128 bits of data (128b/130b
 * encoding). So one direction of a link carries
 *
 *     rate (GT/s) x lanes x 128/130 / 8 bits per byte    GB/s
 *
 * and the other direction carries as much again at the same time. Look at
 * how each generation doubles the rate and each doubling of the width doubles
 * the bandwidth, and find this machine's link (marked *). Real copies reach
 * less: packet headers and flow control take their share (a later chapter
 * measures how much).
 */
#include "chapter.h"
#include "nvml_link.h"
#include "pcie.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char usage[] = "(no arguments)";

static const int table_generations[] = {3, 4, 5};
static const int table_lanes[] = {1, 2, 4, 8, 16};
#define COUNT(array) (sizeof(array) / sizeof(array)[0])

/* listing: pcie-formula */
/* One direction of a link, in GB/s (10^9 bytes per second). */
static double link_gb_per_s(const pcie_generation *g, int lanes)
{
    double payload_fraction = (double)g->payload_bits / g->line_bits; /* 128/130 */
    return g->transfer_rate_gt_per_s * lanes * payload_fraction / 8;
}
/* end listing: pcie-formula */

int main(int argc, char **argv)
{
    if (argc > 1)
        usage_exit_on_help(argv[1], argv[0], usage);
    if (argc > 1)
        usage_error(argv[0], usage, "unexpected argument '%s'", argv[1]);

    /* This machine's link, if there is a GPU and NVML to ask. */
    pcie_link link;
    char why[256];
    bool have_link = pcie_link_query(0, &link, why, sizeof why);

    printf("Theoretical bandwidth of one direction of a PCIe link, GB/s\n");
    printf("  = rate (GT/s) x lanes x 128/130 / 8\n\n");
    printf("%-6s %-7s %-10s", "", "GT/s", "encoding");
    for (size_t l = 0; l < COUNT(table_lanes); l++) {
        char width[8];
        snprintf(width, sizeof width, "x%d", table_lanes[l]);
        printf("  %8s ", width);
    }
    printf("\n");

    const char *failure = NULL;
    bool marked = false;
    for (size_t i = 0; i < COUNT(table_generations); i++) {
        const pcie_generation *g = pcie_generation_info(table_generations[i]);
        if (g == NULL) {
            failure = "common/pcie.c does not know a generation of the table";
            break;
        }
        char encoding[16];
        snprintf(encoding, sizeof encoding, "%db/%db", g->payload_bits, g->line_bits);
        printf("Gen%-3d %-7.1f %-10s", g->generation, g->transfer_rate_gt_per_s, encoding);
        for (size_t l = 0; l < COUNT(table_lanes); l++) {
            bool here = have_link && link.max_generation == (unsigned)g->generation &&
                        link.max_width == (unsigned)table_lanes[l];
            marked = marked || here;
            printf("  %8.3f%c", link_gb_per_s(g, table_lanes[l]), here ? '*' : ' ');
        }
        printf("\n");
    }

    printf("\n");
    if (!have_link)
        printf("No mark: this machine's link is unknown (%s).\n", why);
    else {
        if (marked)
            printf("* this machine: GPU %s, link Gen%u x%u at most", link.pci_bus_id,
                   link.max_generation, link.max_width);
        else
            printf("No mark: this machine's GPU %s has a Gen%u x%u link at most, not in the table",
                   link.pci_bus_id, link.max_generation, link.max_width);
        printf(";\n  running at Gen%u x%u right now", link.current_generation, link.current_width);
        if (link.current_generation < link.max_generation || link.current_width < link.max_width)
            printf(" (an idle GPU slows its link to save power;\n"
                   "  the next large copy brings it back to the maximum)");
        printf(".\n");
    }
    printf("Both directions can be busy at once: a link carries twice its table entry in all.\n");

    /* Check the arithmetic against a figure worked by hand:
     * 32 GT/s x 16 lanes x 128/130 / 8 = 63.0154 GB/s. */
    double gen5_x16 = link_gb_per_s(pcie_generation_info(5), 16);
    printf("\nGen5 x16 = 32 x 16 x 128/130 / 8 = %.3f GB/s (expected 63.015)\n", gen5_x16);
    if (failure == NULL && lround(gen5_x16 * 1000) != 63015)
        failure = "the Gen5 x16 entry is not 63.015 GB/s";
    if (failure == NULL && fabs(gen5_x16 - pcie_gb_per_s(5, 16)) > 1e-9)
        failure = "this program and common/pcie.c disagree on Gen5 x16";
    return verdict(failure);
}
