/* multi_device_check.h - what the two files of the stand-in's device check share
 * (multi_device_check.c: the devices, memory, streams and peer access, and the scenarios;
 * multi_device_queues.c: streams, copies, timing, IPC and reset). */
#ifndef MULTI_DEVICE_CHECK_H
#define MULTI_DEVICE_CHECK_H
#define _GNU_SOURCE
#include "gpu_work.h"
#include "timing.h"

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stdio.h>

extern int failures;
#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        bool ok_ = (cond);                                                                         \
        printf("%s  ", ok_ ? "ok  " : "FAIL");                                                     \
        printf(__VA_ARGS__);                                                                       \
        printf("\n");                                                                              \
        failures += !ok_;                                                                          \
    } while (0)
#define NAME(e) cudaGetErrorName(e)

enum { MIB = 1 << 20, BYTES = 32 * MIB };
#define TWO_DEVICES "FAKE_CUDA_DEVICES=2"
/* The link slow enough (1 GB/s: 32 MiB in 34 ms) that the model, not the host's memcpy, sets
 * the times the timing checks compare. */
#define SLOW_LINK "FAKE_CUDA_LINK_GBPS=1"

/* Runs `scenario` (with up to two arguments) as another process with the environment settings
 * `env` (NAME=VALUE, space-separated); stderr into `errors` when it is not NULL. Whether its
 * checks passed. */
bool run_scenario(const char *env, const char *scenario, const char *arg, const char *arg2,
                  FILE *errors);

/* multi_device_queues.c: checks made in the scenario `two`, and the scenario `ipc-open`. */
void streams_and_events(void);
void synchronisation(void);
void peer_copies(void);
void timing(void);
void ipc(void);
void reset(void);
int ipc_open_scenario(const char *hex);

#endif
