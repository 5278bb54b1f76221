/* pcie.h - the theoretical bandwidth of a PCI Express link, from first principles.
 *
 * Each lane carries one serial bit stream per direction at the generation's
 * transfer rate (GT/s). Line encoding spends some of those bits on clock
 * recovery: 8b/10b for generations 1 and 2, 128b/130b for 3 to 5. So one
 * direction of a link moves rate * lanes * encoding / 8 GB/s, before packet
 * headers and flow control take their share.
 */
#ifndef COURSE_PCIE_H
#define COURSE_PCIE_H

typedef struct pcie_generation {
    int generation;
    double transfer_rate_gt_per_s; /* per lane, per direction */
    int payload_bits;              /* encoding: payload_bits of every line_bits */
    int line_bits;
} pcie_generation;

/* Generations 1 to 5; NULL for any other. */
const pcie_generation *pcie_generation_info(int generation);

/* GB/s in each direction for this generation and lane count; 0 if unknown. */
double pcie_gb_per_s(int generation, int lanes);

#endif
