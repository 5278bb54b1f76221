/* roundtrip.c - no work, only a look for everything a test should not see.
 * From its working folder up to the root it tries to read the course's
 * solution, the sample class's expectations, the grader's output and another
 * student's submission; it tries to open the memory of the process that
 * judges it (its parent, the test program's runner) for writing; and
 * it leaves a file named grader-leftover-reaches-out in the host's /tmp and
 * /dev/shm, in every folder it can list up there (other students' builds,
 * the course) and in the home folders (beside a ~/.bashrc). It returns cudaErrorNotPermitted if it read a file,
 * cudaErrorIllegalState if it opened the judge's memory, and
 * cudaErrorNotSupported if nothing was within reach, so its feedback says
 * which. The grader
 * refuses the file (fopen); with that check off (the self-test's second pass)
 * the test's view holds none of it, and the self-test looks for the files it
 * tried to leave. */
#include "roundtrip.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

static int judge_reachable(void)
{
    char judge_memory[64];
    snprintf(judge_memory, sizeof judge_memory, "/proc/%d/mem", (int)getppid());
    FILE *judge = fopen(judge_memory, "r+");
    if (judge == NULL)
        return 0;
    fclose(judge);
    return 1;
}

static int files_reachable(void)
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
    leave("/tmp");
    leave("/dev/shm");
    leave("/root"); /* home folders: where a ~/.bashrc would be */
    DIR *homes = opendir("/home");
    for (struct dirent *entry; homes != NULL && (entry = readdir(homes)) != NULL;) {
        char home[512];
        snprintf(home, sizeof home, "/home/%s", entry->d_name);
        leave(home);
    }
    if (homes != NULL)
        closedir(homes);
    return found;
}

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n)
{
    (void)h_in;
    (void)h_out;
    (void)n;
    /* Which error the tests report says what was within reach. */
    if (files_reachable())
        return cudaErrorNotPermitted;
    return judge_reachable() ? cudaErrorIllegalState : cudaErrorNotSupported;
}
