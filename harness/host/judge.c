/* judge.c - the judge's side of each test (host.h): the checker started and stopped, one test
 * at a time handed to it with its time limit, the GPU's lock taken for it (shared, or alone
 * while a timed test measures), and its verdict read back.
 *
 * The judge never touches CUDA and loads no learner code. A checker that crashes or stops
 * answering is the course's problem, not the learner's: its test is not graded, and a fresh
 * checker takes the next.
 */
#define _GNU_SOURCE /* pipe2 */
#include "checker.h"
#include "gpu_share.h"
#include "host.h"
#include "io.h"
#include "processes.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECKER_START_S 120.0 /* a context can take a second when many processes ask at once */

typedef struct checker_process {
    pid_t pid;
    int command_fd, reply_fd, output_fd;
} checker_process;

static int result_fd = -1; /* make grade's channel, held by the judge alone */
static checker_process the_checker = {0, -1, -1, -1};
static int checker_devices; /* the GPUs the running checker saw */
static int checkers_started, workers_replaced;
static size_t printed_total; /* bytes the learner's code printed in this exercise's tests */

void judge_keep_result_channel_from_checkers(int fd)
{
    result_fd = fd;
}

size_t judge_printed_bytes(void)
{
    return printed_total;
}

/* Starts the checker: its standard output and error go to a pipe the judge reads (what the
 * course's own code prints; the learner's goes to the checker). */
static bool start_checker(checker_process *k, bool use_cuda)
{
    int to_checker[2], from_checker[2], output[2];
    if (pipe2(to_checker, O_CLOEXEC) != 0)
        return false;
    if (pipe2(from_checker, O_CLOEXEC) != 0 || pipe2(output, O_CLOEXEC) != 0) {
        close(to_checker[0]);
        close(to_checker[1]);
        return false;
    }
    fflush(NULL);
    const bool gpu_shared = gpu_share_active();
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0); /* its own group, so that what it starts dies with it */
        signal(SIGPIPE, SIG_DFL);
        if (result_fd >= 0)
            close(result_fd);
        gpu_share_close(); /* the judge's: a checker that unlocked them would unlock its */
        dup2(output[1], STDOUT_FILENO);
        dup2(output[1], STDERR_FILENO);
        close(to_checker[1]);
        close(from_checker[0]);
        close(output[0]);
        checker_main(to_checker[0], from_checker[1], use_cuda, gpu_shared);
    }
    close(to_checker[0]);
    close(from_checker[1]);
    close(output[1]);
    if (pid < 0) {
        close(to_checker[1]);
        close(from_checker[0]);
        close(output[0]);
        return false;
    }
    setpgid(pid, pid);
    fcntl(output[0], F_SETFL, O_NONBLOCK);
    fcntl(from_checker[0], F_SETFL, O_NONBLOCK);
    *k = (checker_process){pid, to_checker[1], from_checker[0], output[0]};
    checkers_started++;
    return true;
}

/* The checker's own output: the course's, kept for the note when it dies. */
static char checker_said[1024];

static bool drain_output(const checker_process *k)
{
    char buffer[65536];
    for (;;) {
        ssize_t got = read(k->output_fd, buffer, sizeof buffer);
        if (got > 0) {
            size_t keep =
                (size_t)got < sizeof checker_said - 1 ? (size_t)got : sizeof checker_said - 1;
            memcpy(checker_said, buffer + got - keep, keep);
            checker_said[keep] = '\0';
            continue;
        }
        return !(got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR));
    }
}

/* Since when the checker has been starting a worker (REPLY_STARTING); 0 when it is not. */
static double worker_starting_since;

/* Stops the checker, its worker and all they started, for as long as a timed test of another
 * program has the GPU, and tells the checker how long that was: its deadline moves on. */
static void yield_to_a_timed_test(const checker_process *k, double *deadline)
{
    if (worker_starting_since > 0 || !gpu_share_should_yield())
        return;
    command stopping = {COMMAND_STOPPING, 0, 0, 0, 0};
    (void)write_all(k->command_fd, &stopping, sizeof stopping);
    const double stopped = gpu_share_yield(k->pid);
    *deadline += stopped;
    command move = {COMMAND_MOVE, 0, 0, 0, stopped};
    (void)write_all(k->command_fd, &move, sizeof move);
    host_stat("a test stopped for %.2f s while a timed test had the GPU", stopped);
}

/* Waits until the checker's pipe holds `size` more bytes at buffer, or the deadline, reading its
 * output meanwhile. Returns 1 when read, 0 at the pipe's end, -1 at the deadline. While
 * `running` (a test has the GPU), it yields the GPU to timed tests that wait for it. */
static int await(const checker_process *k, void *buffer, size_t size, double *deadline,
                 bool running)
{
    char *at = buffer;
    while (size > 0) {
        double left = *deadline - checker_now_s();
        if (left <= 0)
            return -1;
        if (running && gpu_share_active() && left > GPU_SHARE_CHECK_S)
            left = GPU_SHARE_CHECK_S;
        struct pollfd fds[2] = {{k->reply_fd, POLLIN, 0}, {k->output_fd, POLLIN, 0}};
        int ready = poll(fds, 2, (int)ceil(left * 1000));
        if (ready < 0 && errno != EINTR)
            return 0;
        if (running)
            yield_to_a_timed_test(k, deadline);
        if (fds[1].revents)
            (void)drain_output(k);
        if (fds[0].revents == 0)
            continue;
        ssize_t got = read(k->reply_fd, at, size);
        if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
            return 0;
        if (got > 0) {
            at += got;
            size -= (size_t)got;
        }
    }
    return 1;
}

/* Ends the checker and everything below it (its worker, what the learner's code started). */
static void stop_checker(checker_process *k, bool ask_first)
{
    if (ask_first) {
        command quit = {COMMAND_QUIT, 0, 0, 0, 0};
        (void)write_all(k->command_fd, &quit, sizeof quit);
    }
    close(k->command_fd);
    pid_t done = 0;
    int status;
    for (int tries = 0; tries < 400 && (done = waitpid(k->pid, &status, WNOHANG)) == 0; tries++) {
        (void)drain_output(k);
        usleep(5000);
    }
    for (int pass = 0; pass < 2; pass++)
        signal_processes_below(k->pid, SIGKILL, done == 0);
    if (done == 0)
        waitpid(k->pid, &status, 0);
    (void)drain_output(k);
    close(k->reply_fd);
    close(k->output_fd);
    k->pid = 0;
}

/* A checker for the next test, started where there is none. Returns 1 when it is ready; 0 when
 * this test is not graded (said in outcome); -1 when the first checker found no GPU (why). */
static int checker_ready(test_outcome *outcome, bool use_cuda, char *why, size_t why_size)
{
    checker_process *k = &the_checker;
    if (k->pid != 0)
        return 1;
    hello h;
    if (!start_checker(k, use_cuda)) {
        snprintf(outcome->message, sizeof outcome->message,
                 "not graded: no process could be started for the test (%s)", strerror(errno));
        outcome->not_graded = true;
        return 0;
    }
    const double starting = checker_now_s();
    double started_by = starting + CHECKER_START_S;
    int got = await(k, &h, sizeof h, &started_by, false);
    host_stat("checker %d ready in %.2f s (%.2f s waiting for a turn to make its context, %.2f s "
              "making it)",
              checkers_started, checker_now_s() - starting, got == 1 ? h.turn_wait_s : 0,
              got == 1 ? h.making_s : 0);
    if (got == 1 && h.gpu_ok) {
        checker_devices = h.devices;
        return 1;
    }
    stop_checker(k, false);
    if (got == 1)
        snprintf(why, why_size, "%s", h.why);
    else
        snprintf(why, why_size, "the CUDA runtime %s while looking for a device",
                 got == 0 ? "crashed" : "hung");
    if (checkers_started == 1)
        return -1;
    snprintf(outcome->message, sizeof outcome->message,
             "not graded: its process could not use the GPU (%s)", why);
    outcome->not_graded = true;
    return 0;
}

/* The time a test spent, for COURSE_RUNNER_STATS: with the GPU alone, and waiting for it. */
typedef struct test_times {
    double waiting, running, alone_since, alone_s, alone_wait_s;
    bool alone;
} test_times;

/* The work queues the workers' contexts are made with, for the statistics: the environment's,
 * else the host's (remote_fit_worker), else the driver's 8. */
static int workers_queues(void)
{
    const char *given = getenv(CONNECTIONS_VARIABLE);
    if (given != NULL)
        return atoi(given);
    return host_work_queues > 0 ? host_work_queues : 8;
}

/* Hands the checker test t of exercise x and waits for its verdict, taking the GPU alone when
 * the test asks (a timed test's measurement) and back shared when it is done: the time either
 * takes is not the test's, and its deadline moves on by it. Returns await's last answer. */
static int hand_over(int x, int t, double timeout, reply *r, double *deadline, test_times *times)
{
    checker_process *k = &the_checker;
    command c = {COMMAND_RUN, (uint32_t)x, (uint32_t)t, 0, timeout};
    times->waiting = checker_now_s();
    gpu_share_take(false);
    times->running = checker_now_s();
    *deadline = times->running + timeout + BACKSTOP_S;
    int got = write_all(k->command_fd, &c, sizeof c) ? 1 : 0;
    double held_deadline = *deadline;
    bool gave_back = false; /* the GPU, while a worker starts */
    worker_starting_since = 0;
    while (got == 1) {
        got = await(k, r, sizeof *r, deadline, true);
        if (got != 1 || r->kind == REPLY_VERDICT)
            break;
        if (r->kind == REPLY_ALONE && !times->alone && host_entries[x]->tests[t].timed) {
            const double asked = checker_now_s();
            gpu_share_give_back();
            gpu_share_take(true);
            times->alone = true;
            times->alone_since = checker_now_s();
            times->alone_wait_s += times->alone_since - asked;
            *deadline += times->alone_since - asked;
            command go = {COMMAND_GO, (uint32_t)x, (uint32_t)t, 0, 0};
            if (!write_all(k->command_fd, &go, sizeof go))
                got = 0;
        } else if (r->kind == REPLY_STARTING) {
            /* Its turn to make a context may come after every other program's: the test's
             * deadline waits, and a start that never ends still ends. Meanwhile the GPU is
             * not this test's: a timed test of another program that waited for it would
             * keep every program stopped for that long. */
            worker_starting_since = checker_now_s();
            held_deadline = *deadline;
            *deadline = worker_starting_since + 2 * WORKER_START_S + BACKSTOP_S;
            gave_back = !times->alone;
            if (gave_back)
                gpu_share_give_back();
        } else if (r->kind == REPLY_STARTED && worker_starting_since > 0) {
            host_stat("worker started in %.2f s (%.2f s waiting for a turn to make its "
                      "context, %.2f s making it) with %d work queues",
                      checker_now_s() - worker_starting_since, r->turn_wait_s, r->making_s,
                      workers_queues());
            if (gave_back)
                gpu_share_take(false); /* after the timed tests that wait, if any */
            gave_back = false;
            *deadline = held_deadline + (checker_now_s() - worker_starting_since);
            worker_starting_since = 0;
        } else if (r->kind == REPLY_SHARED && times->alone) {
            times->alone = false;
            times->alone_s += checker_now_s() - times->alone_since;
            const double asked = checker_now_s();
            gpu_share_give_back();
            gpu_share_take(false);
            /* Taking it back may wait behind another program's timed test. */
            const double waited = checker_now_s() - asked;
            *deadline += waited;
            command move = {COMMAND_MOVE, (uint32_t)x, (uint32_t)t, 0, waited};
            (void)write_all(k->command_fd, &move, sizeof move);
        }
    }
    if (times->alone)
        times->alone_s += checker_now_s() - times->alone_since;
    worker_starting_since = 0;
    return got;
}

/* The verdict the checker sent, its message read after it; or, where it sent none that can be
 * believed, the test not graded and the checker stopped. */
static void take_verdict(exercise_entry *e, int x, int t, int got, const reply *r, double *deadline,
                         test_outcome *outcome)
{
    checker_process *k = &the_checker;
    bool genuine = got == 1 && r->kind == REPLY_VERDICT && r->exercise == (uint32_t)x &&
                   r->test == (uint32_t)t && r->message_length < sizeof outcome->message;
    if (genuine) {
        got = await(k, outcome->message, r->message_length, deadline, true);
        outcome->message[got == 1 ? r->message_length : 0] = '\0';
        genuine = got == 1;
    }
    outcome->ran = true;
    if (!genuine) {
        /* The checker is the course's: a crash or a hang of its own says nothing of the
         * learner's code, so the test is not graded, never failed. */
        stop_checker(k, false);
        outcome->passed = false;
        outcome->not_graded = true;
        snprintf(outcome->message, sizeof outcome->message,
                 "not graded: the course's checking process %s (a problem of the course or the "
                 "machine, not of this code)%s%s",
                 got == -1 ? "stopped answering" : "ended in the middle of the test",
                 checker_said[0] ? ". It said: " : "", checker_said);
        text_make_printable(outcome->message, sizeof outcome->message);
        return;
    }
    (void)drain_output(k);
    outcome->passed = r->verdict == VERDICT_PASS;
    outcome->not_graded = r->verdict == VERDICT_NOT_GRADED;
    outcome->evidence = (r->flags & REPLY_EVIDENCE) != 0;
    printed_total += (size_t)r->printed;
    text_make_printable(outcome->message, sizeof outcome->message);
    if (r->flags & REPLY_UNLOADABLE)
        snprintf(e->unloadable, sizeof e->unloadable, "%.*s", (int)sizeof e->unloadable - 1,
                 outcome->message);
    if (r->fresh_start) {
        workers_replaced++;
        host_stat("a fresh worker after test %d: %s", t + 1, fresh_start_words(r->fresh_start));
    }
}

bool judge_run_exercise(int x, test_outcome *outcomes, double timeout, bool use_cuda, char *why,
                        size_t why_size)
{
    exercise_entry *e = host_entries[x];
    printed_total = 0;
    host_stat("exercise %s (%s)", e->info->id, e->options.source ? e->options.source : "");
    for (int t = 0; t < e->count; t++) {
        if (e->gpu_absent && !e->tests[t].host_only) {
            outcomes[t].needs_gpu = true;
            snprintf(outcomes[t].message, sizeof outcomes[t].message, "not run: it needs a GPU");
            continue;
        }
        if (e->skip_timed && e->tests[t].timed) {
            outcomes[t].ran = true;
            snprintf(outcomes[t].message, sizeof outcomes[t].message,
                     "not run: COURSE_SKIP_TIMED=1 skips the tests that time the GPU");
            continue;
        }
        if (e->unloadable[0] != '\0') {
            outcomes[t].ran = true;
            snprintf(outcomes[t].message, sizeof outcomes[t].message, "%s", e->unloadable);
            continue;
        }
        const int ready = checker_ready(&outcomes[t], use_cuda, why, why_size);
        if (ready < 0)
            return false;
        if (ready == 0)
            continue;
        if (use_cuda && checker_devices < e->gpus_needed && !e->tests[t].host_only) {
            e->gpus_seen = checker_devices;
            outcomes[t].needs_gpu = true;
            snprintf(outcomes[t].message, sizeof outcomes[t].message, "not run: it needs %d GPUs",
                     e->gpus_needed);
            continue;
        }
        reply r;
        double deadline = 0;
        test_times times = {0, 0, 0, 0, 0, false};
        const int got = hand_over(x, t, timeout, &r, &deadline, &times);
        take_verdict(e, x, t, got, &r, &deadline, &outcomes[t]);
        gpu_share_give_back(); /* once the checker is done with it, or gone */
        host_stat("test %d%s took %.2f s (%.2f s of it with the GPU alone), after %.2f s waiting "
                  "for the GPU",
                  t + 1, e->tests[t].timed ? " (timed)" : "",
                  checker_now_s() - times.running - times.alone_wait_s, times.alone_s,
                  times.running - times.waiting + times.alone_wait_s);
    }
    return true;
}

void judge_stop_checker(void)
{
    if (the_checker.pid != 0)
        stop_checker(&the_checker, true);
}

void judge_say_what_it_took(int tests)
{
    host_stat("%d checker%s and %d worker%s replaced for %d tests", checkers_started,
              checkers_started == 1 ? "" : "s", workers_replaced, workers_replaced == 1 ? "" : "s",
              tests);
}
