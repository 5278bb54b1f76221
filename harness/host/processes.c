/* processes.c - a process's descendants, by parentage (processes.h). */
#include "processes.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SCANNED 65536

/* Every process's parent, from /proc/PID/stat (the field after the name, which may hold spaces
 * and parentheses, so the last ')' ends it). */
static size_t scan(pid_t *pid, pid_t *parent, size_t room)
{
    DIR *proc = opendir("/proc");
    size_t count = 0;
    if (proc == NULL)
        return 0;
    for (struct dirent *entry; count < room && (entry = readdir(proc)) != NULL;) {
        char *end = NULL;
        long number = strtol(entry->d_name, &end, 10);
        if (number <= 0 || *end != '\0')
            continue;
        char path[64], line[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", number);
        FILE *file = fopen(path, "r");
        if (file == NULL)
            continue;
        const bool read = fgets(line, sizeof line, file) != NULL;
        fclose(file);
        const char *after_name = read ? strrchr(line, ')') : NULL;
        char state;
        int ppid;
        if (after_name != NULL && sscanf(after_name + 1, " %c %d", &state, &ppid) == 2 &&
            state != 'Z') {
            pid[count] = (pid_t)number;
            parent[count] = (pid_t)ppid;
            count++;
        }
    }
    closedir(proc);
    return count;
}

size_t processes_below(pid_t root, pid_t *pids, size_t room)
{
    static pid_t pid[MAX_SCANNED], parent[MAX_SCANNED];
    const size_t count = scan(pid, parent, MAX_SCANNED);
    size_t found = 0;
    /* Breadth first: the root's children, then theirs. */
    pid_t frontier[1024];
    size_t frontier_count = 1, next = 0;
    frontier[0] = root;
    while (next < frontier_count) {
        const pid_t parent_pid = frontier[next++];
        for (size_t i = 0; i < count; i++) {
            if (parent[i] != parent_pid || pid[i] == root)
                continue;
            if (found < room)
                pids[found] = pid[i];
            found++;
            if (frontier_count < sizeof frontier / sizeof frontier[0])
                frontier[frontier_count++] = pid[i];
        }
    }
    return found < room ? found : room;
}

size_t signal_processes_below(pid_t root, int sig, bool root_too)
{
    pid_t pids[1024];
    const size_t count = processes_below(root, pids, sizeof pids / sizeof pids[0]);
    if (root_too)
        kill(root, sig);
    for (size_t i = 0; i < count; i++)
        kill(pids[i], sig);
    return count + root_too;
}
