/* devices.c - which devices the stand-in runtime has, for chapter 6 (built in by build.sh with
 * multi-device.patch, which makes the shared runtime's device, memory, streams and events
 * belong to a device each).
 *
 * The machine has FAKE_CUDA_DEVICES devices (1 to 8; default 1, the shared stand-in's one
 * device): alike but for their PCI bus number and UUID. A value outside 1 to 8 is reported on
 * stderr, once, and the machine has 1: a typo then still leaves the one-device runtime that
 * every program but chapter 6's expects, and says so, rather than failing every CUDA call.
 *
 * CUDA_VISIBLE_DEVICES shows the process some of them, renumbered from 0 in the order it names
 * them, as the real runtime does (CUDA Programming Guide, "CUDA Environment Variables",
 * https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/environment-variables.html):
 *   - unset: every device;
 *   - empty: none (cudaGetDeviceCount says cudaErrorNoDevice); so are "none" and "-1", whose
 *     first entry names no device;
 *   - a comma-separated list of device indices, or of "GPU-" and the start of a device's UUID
 *     (as nvidia-smi -L prints it; enough of it to name one device): those devices;
 *   - the first entry that names no device (out of range, not a number, a UUID that matches
 *     none or more than one) ends the list: "0,2,-1,1" shows 0 and 2. An index is read as the
 *     number its entry starts with ("1gpu" is 1), as seen of the real parser (pytorch/pytorch
 *     pull request 84879). The stand-in's own choices: a device named twice ends the list too,
 *     and a MIG instance ("MIG-...") names no device (MIG is not modelled).
 * Both are read once, at the first call, as the real runtime reads them when it starts.
 */
#include "fakecuda.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

/* The machine's devices: the first one's bus number and UUID are the one-device stand-in's. */
#define FIRST_PCI_BUS 0x1b
#define PCI_BUS_STEP 0x20
#define UUID_TEXT "fakecudart-000%d" /* and a NUL: the 16 bytes of cudaDeviceProp.uuid */

static struct {
    int count;                    /* what this process sees */
    int physical[FC_MAX_DEVICES]; /* the machine's device behind each of its numbers */
} seen;

/* FAKE_CUDA_DEVICES, or 1 (said on stderr) where it is not a count from 1 to FC_MAX_DEVICES. */
static int machine_devices(void)
{
    const char *text = getenv("FAKE_CUDA_DEVICES");
    if (text == NULL)
        return 1;
    char *end = NULL;
    long count = strtol(text, &end, 10);
    if (end != text && *end == '\0' && count >= 1 && count <= FC_MAX_DEVICES)
        return (int)count;
    fprintf(stderr,
            "fakecudart: FAKE_CUDA_DEVICES=\"%s\" is no count of devices from 1 to %d: the "
            "stand-in has 1 device\n",
            text, FC_MAX_DEVICES);
    return 1;
}

void fc_device_uuid(int physical, char uuid[16])
{
    char text[17];
    snprintf(text, sizeof text, UUID_TEXT, physical);
    memcpy(uuid, text, 16);
}

int fc_device_pci_bus(int physical)
{
    return FIRST_PCI_BUS + PCI_BUS_STEP * physical;
}

/* The UUID as nvidia-smi -L and CUDA_VISIBLE_DEVICES write it: GPU-xxxxxxxx-xxxx-...; lowercase. */
static void uuid_name(int physical, char name[41])
{
    unsigned char b[16];
    fc_device_uuid(physical, (char *)b);
    snprintf(name, 41, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

/* The machine's device an entry of CUDA_VISIBLE_DEVICES (of `length` characters) names, or -1. */
static int named_device(const char *entry, size_t length, int machine)
{
    if (length > 4 && strncasecmp(entry, "GPU-", 4) == 0) {
        int found = -1, matches = 0;
        for (int d = 0; d < machine; d++) {
            char name[41];
            uuid_name(d, name);
            if (length <= strlen(name) && strncasecmp(entry, name, length) == 0)
                found = d, matches++;
        }
        return matches == 1 ? found : -1;
    }
    size_t at = 0;
    while (at < length && isspace((unsigned char)entry[at]))
        at++;
    if (at == length || !isdigit((unsigned char)entry[at]))
        return -1; /* "-1", "none", "MIG-...", an empty entry */
    long index = 0;
    for (; at < length && isdigit((unsigned char)entry[at]) && index < machine; at++)
        index = index * 10 + (entry[at] - '0');
    return index < machine ? (int)index : -1;
}

static void find_devices(void)
{
    const int machine = machine_devices();
    const char *list = getenv("CUDA_VISIBLE_DEVICES");
    if (list == NULL) {
        for (int d = 0; d < machine; d++)
            seen.physical[seen.count++] = d;
        return;
    }
    bool taken[FC_MAX_DEVICES] = {false};
    for (const char *entry = list; seen.count < machine;) {
        const char *comma = strchr(entry, ',');
        const size_t length = comma != NULL ? (size_t)(comma - entry) : strlen(entry);
        const int d = named_device(entry, length, machine);
        if (d < 0 || taken[d])
            break;
        taken[d] = true;
        seen.physical[seen.count++] = d;
        if (comma == NULL)
            break;
        entry = comma + 1;
    }
}

int fc_device_count(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, find_devices);
    return seen.count;
}

int fc_physical_device(int device)
{
    return device >= 0 && device < fc_device_count() ? seen.physical[device] : -1;
}

int fc_visible_device(int physical)
{
    for (int d = 0; d < fc_device_count(); d++)
        if (seen.physical[d] == physical)
            return d;
    return -1;
}
