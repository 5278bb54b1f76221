/* pcie.c - PCIe generations (PCI-SIG base specifications 1.0 to 5.0). */
#include "pcie.h"

#include <stddef.h>

static const pcie_generation generations[] = {
    {1, 2.5, 8, 10}, {2, 5.0, 8, 10}, {3, 8.0, 128, 130}, {4, 16.0, 128, 130}, {5, 32.0, 128, 130},
};

const pcie_generation *pcie_generation_info(int generation)
{
    for (size_t i = 0; i < sizeof generations / sizeof generations[0]; i++)
        if (generations[i].generation == generation)
            return &generations[i];
    return NULL;
}

double pcie_gb_per_s(int generation, int lanes)
{
    const pcie_generation *g = pcie_generation_info(generation);
    if (g == NULL || lanes <= 0)
        return 0;
    /* GT/s is 10^9 transfers of one bit per lane; 8 bits to a byte. */
    return g->transfer_rate_gt_per_s * lanes * g->payload_bits / g->line_bits / 8;
}
