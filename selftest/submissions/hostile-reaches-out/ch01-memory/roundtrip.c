/* roundtrip.c - right work, after looking for everything a test should not see.
 * From its working folder up to the root it tries to read the course's
 * solution, the sample class's expectations, the grader's output and another
 * student's submission; it tries to open the judging process's memory; and
 * it leaves a file named grader-leftover-reaches-out in the host's /tmp and
 * /dev/shm and in every folder it can list up there (other students' builds,
 * the course). If it read anything, it fails its own tests on purpose, so its
 * score says so. The grader refuses the file (fopen); with that check off
 * (the self-test's second pass) the test's view holds none of it, and the
 * self-test looks for the files it tried to leave. */
#include "roundtrip.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

#define LEFTOVER "grader-leftover-reaches-out"

static int readable(const char *path)
{
    FILE *file = fopen(path, "r");
    if (file == NULL)
        return 0;
    int got = fgetc(file) != EOF;
    fclose(file);
    return got;
}

static void leave(const char *folder)
{
    char path[8192];
    if (strlen(folder) > 4096)
        return;
    snprintf(path, sizeof path, "%s/%s", folder, LEFTOVER);
    FILE *file = fopen(path, "w");
    if (file != NULL)
        fclose(file);
}

static int reach_out(void)
{
    static const char *secrets[] = {"solutions/ch01-memory/roundtrip.c",
                                    "selftest/submissions/expected.tsv",
                                    "grader-out/grades.csv",
                                    "class/student-good/exercises/ch01-memory/roundtrip.c"};
    int found = 0;
    char up[64] = ".";
    for (int level = 0; level < 12; level++) {
        char path[4096];
        for (size_t s = 0; s < sizeof secrets / sizeof secrets[0]; s++) {
            snprintf(path, sizeof path, "%s/%s", up, secrets[s]);
            found |= readable(path);
        }
        DIR *listing = opendir(up);
        for (struct dirent *entry; listing != NULL && (entry = readdir(listing)) != NULL;) {
            snprintf(path, sizeof path, "%s/%s", up, entry->d_name);
            leave(path);
        }
        if (listing != NULL)
            closedir(listing);
        strcat(up, "/..");
    }
    FILE *judge = fopen("/proc/1/mem", "r+");
    if (judge != NULL) {
        found = 1;
        fclose(judge);
    }
    leave("/tmp");
    leave("/dev/shm");
    return found;
}

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n)
{
    if (reach_out())
        return cudaErrorNotPermitted;
    const size_t bytes = n * sizeof(float);
    float *d_buffer = NULL;
    cudaError_t err = cudaMalloc((void **)&d_buffer, bytes);
    if (err != cudaSuccess)
        return err;
    err = cudaMemcpy(d_buffer, h_in, bytes, cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(h_out, d_buffer, bytes, cudaMemcpyDeviceToHost);
    cudaError_t freed = cudaFree(d_buffer);
    return err != cudaSuccess ? err : freed;
}
