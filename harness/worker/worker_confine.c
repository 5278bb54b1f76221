/* worker_confine.c - what the learner's code may do to other processes: nothing (worker.h).
 *
 * The worker confines itself before it loads any learner module: no capability, even as root,
 * and a seccomp filter that lets signals reach this process alone and denies the calls that
 * reach into another process (ptrace, process_vm_*, kcmp, pidfd_*). make grade's sandbox
 * denies more besides; this holds wherever the worker runs, make check's included.
 */
#define _GNU_SOURCE /* syscall */
#include "worker.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* --- What the learner's code may do to other processes: nothing ------------------------------ */

#if defined(__x86_64__)
#define WORKER_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define WORKER_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

#define LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))
#define ARG_LOW(n) (offsetof(struct seccomp_data, args[n]))
#define ARG_HIGH(n) (offsetof(struct seccomp_data, args[n]) + 4)
#define DENY BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM)
#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

/* No capability at all, even as root (make check run as root, CI's): a capability would let
 * the learner's code open the checker's descriptors and memory (/proc/PID/fd, /proc/PID/mem)
 * although the checker is not dumpable. Dropped from the bounding set too, so that no program
 * it could start regains them. */
static bool drop_capabilities(char *why, size_t why_size)
{
    for (int cap = 0; cap <= 63; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL && errno != EPERM)
            break;
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct none[2];
    memset(none, 0, sizeof none);
    if (syscall(SYS_capset, &header, none) != 0) {
        snprintf(why, why_size, "the worker could not drop its capabilities: %s", strerror(errno));
        return false;
    }
    return true;
}

/* Signals go to this process only (its own threads too: raise, abort, pthread_kill); no
 * ptrace, no reading or writing another process's memory, no taking its descriptors. The
 * sandbox of make grade denies more besides; this holds wherever the worker runs. */
bool worker_confine(char *why, size_t why_size)
{
    if (!drop_capabilities(why, why_size))
        return false;
#ifdef WORKER_AUDIT_ARCH
    const __u32 self = (__u32)getpid();
    struct sock_filter program[] = {
        LOAD(arch),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, WORKER_AUDIT_ARCH, 1, 0),
        DENY, /* another architecture's system call numbers (int 0x80): none */
        LOAD(nr),
#ifdef __X32_SYSCALL_BIT
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, __X32_SYSCALL_BIT, 0, 1),
        DENY,
#endif
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_kill, 5, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_tgkill, 4, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigqueueinfo, 3, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_tgsigqueueinfo, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_tkill, 7, 0),
        BPF_JUMP(BPF_JMP | BPF_JA, 7, 0, 0), /* past the checks of a target, to the next list */
        /* The target (the first argument) must be this process. */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_HIGH(0)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LOW(0)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, self, 0, 1),
        ALLOW,
        DENY,
        DENY, /* tkill: a thread of any process, by its id alone */
        LOAD(nr),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ptrace, 7, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv, 6, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_writev, 5, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_kcmp, 4, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pidfd_open, 3, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pidfd_getfd, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pidfd_send_signal, 1, 0),
        ALLOW,
        DENY,
    };
    struct sock_fprog filter = {(unsigned short)(sizeof program / sizeof program[0]), program};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter) != 0) {
        snprintf(why, why_size, "the worker's seccomp filter could not be installed: %s",
                 strerror(errno));
        return false;
    }
    return true;
#else
    snprintf(why, why_size, "the worker has no seccomp filter for this architecture");
    return false;
#endif
}
