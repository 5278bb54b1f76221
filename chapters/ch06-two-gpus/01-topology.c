/* 01-topology.c - the GPUs of this machine and how each pair is linked.
 *
 * Before moving data between two GPUs, look at what connects them. For every GPU it prints the
 * name and the PCI bus id; then, for every ordered pair, whether the CUDA runtime lets the first
 * reach the second's memory directly (cudaDeviceCanAccessPeer: peer access), and the link NVML
 * sees between them: NVLink with its count of links, an NVSwitch, or PCIe and where the two
 * GPUs' PCIe paths meet. Peer access over PCIe needs both GPUs under one switch or host bridge
 * that passes peer traffic; over NVLink it is always there. Where there is no peer access the
 * driver still copies between the GPUs, staged through host memory (02-peer-copies measures
 * what that costs).
 *
 *     01-topology
 *
 * It needs two GPUs or more; with fewer it says so and exits 77 (skipped). Its last line is
 * "PASSED" when the runtime's answers agree with themselves: a GPU never its own peer, every
 * GPU with a PCI bus id of its own.
 */
#include "chapter.h"
#include "cuda_check.h"
#include "device_info.h"
#include "nvml_link.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] = "(no arguments)";

/* The GPUs as the runtime lists them, and each ordered pair's peer access. */
typedef struct topology {
    int count;
    device_info *devices;
    int *can_access; /* [from * count + to] */
} topology;

static void list_devices(topology *t)
{
    printf("%d GPUs\n\n  %-4s %-16s %s\n", t->count, "GPU", "PCI bus id", "name");
    for (int d = 0; d < t->count; d++) {
        CUDA_CHECK(device_info_query(d, &t->devices[d]));
        printf("  %-4d %-16s %s\n", d, t->devices[d].pci_bus_id, t->devices[d].name);
    }
}

/* listing: can-access-peer */
static void peer_matrix(topology *t)
{
    printf("\nPeer access (cudaDeviceCanAccessPeer: can the row's GPU reach the column's memory)\n"
           "  %-6s",
           "from\\to");
    for (int to = 0; to < t->count; to++)
        printf(" %5d", to);
    printf("\n");
    for (int from = 0; from < t->count; from++) {
        printf("  %-6d ", from);
        for (int to = 0; to < t->count; to++) {
            int *can = &t->can_access[from * t->count + to];
            CUDA_CHECK(cudaDeviceCanAccessPeer(can, from, to));
            printf(" %5s", from == to ? "-" : *can ? "yes" : "no");
        }
        printf("\n");
    }
}
/* end listing: can-access-peer */

/* NVML's link for every pair, each unordered pair once; false when NVML could not say. */
static bool link_table(const topology *t)
{
    char why[256], described[64];
    bool all_known = true;
    printf("\nLinks (NVML, as seen from the first GPU)\n  %-8s %-28s %s\n", "pair", "link",
           "peer access");
    for (int a = 0; a < t->count; a++)
        for (int b = a + 1; b < t->count; b++) {
            gpu_pair_link link;
            char pair[32];
            snprintf(pair, sizeof pair, "%d-%d", a, b);
            bool known = gpu_pair_link_query(a, b, &link, why, sizeof why);
            all_known = all_known && known;
            printf("  %-8s %-28s %s\n", pair,
                   known ? gpu_pair_link_describe(&link, described, sizeof described) : "unknown",
                   t->can_access[a * t->count + b] ? "yes" : "no");
            if (!known)
                printf("           (%s)\n", why);
        }
    return all_known;
}

/* What the runtime said must agree with itself; the first disagreement, or NULL. */
static const char *inconsistency(const topology *t)
{
    for (int a = 0; a < t->count; a++) {
        if (t->can_access[a * t->count + a])
            return "a GPU is reported as its own peer";
        for (int b = a + 1; b < t->count; b++)
            if (strcmp(t->devices[a].pci_bus_id, t->devices[b].pci_bus_id) == 0)
                return "two GPUs report the same PCI bus id";
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        usage_exit_on_help(argv[1], argv[0], usage);
    if (argc > 1)
        usage_error(argv[0], usage, "unexpected argument '%s'", argv[1]);

    topology t = {.count = gpus_or_skip(2, argv[0])};
    t.devices = host_alloc((size_t)t.count * sizeof *t.devices);
    t.can_access = host_alloc((size_t)t.count * (size_t)t.count * sizeof *t.can_access);
    list_devices(&t);
    peer_matrix(&t);
    if (!link_table(&t))
        printf("\nThe links are unknown where NVML could not say (it is not needed for the rest "
               "of the chapter).\n");
    const char *failure = inconsistency(&t);
    free(t.devices);
    free(t.can_access);
    return verdict(failure);
}
