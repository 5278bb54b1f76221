#!/usr/bin/env python3
"""gpu_lock_timeline.py - what one GPU's lock did while a run shared it: how long timed tests
held it alone, how long each waited for the programs holding it to let go, and how long it was
shared or free.

    dev/gpu_lock_timeline.py LOCK_DIR [GPU] [--every MS]     (until SIGINT or SIGTERM)

Reads /proc/locks every MS milliseconds (2 by default) for the flock locks on LOCK_DIR's
gpu-GPU.lock and gpu-GPU.turnstile (harness/host/gpu_share.h says what each is for), and on
exit prints the share of the time in each state, how many programs held the lock shared on
average in each, and the count and mean length of the windows and of the drains before them;
then how busy the turns to make a CUDA context were (contexts*.lock): how many contexts were
begun, how often every turn was taken, and how many programs waited for one (in line,
contexts-line.lock, at its front, contexts-front.lock, or at a turn), where the contexts were
begun, and for whom the GPU was alone, both by place: the folder under build/ that the run of
each program names (a grading's --out, else a test host's --learner: build/selftest/agreement,
build/modules/mutants...), by the program that held the turn (a test host holds it for its own
context and for its worker's).
Run it as root:
/proc/locks shows a reader only the locks of processes it can see, and make grade's test hosts
are in pid namespaces of their own.
The states, from the samples:
  alone    a timed test holds the GPU lock alone (its window);
  drain    a timed test holds the turnstile and waits for the holders of the lock to let go
           (each stops once it has held it YIELD_AFTER_S, harness/host/gpu_share.c): nobody
           new comes in;
  shared   test programs hold it shared, nobody waits;
  free     nobody holds it.
"""

import os
import signal
import sys
import time


CONTEXT_TURNS = ("contexts.lock", "contexts-1.lock", "contexts-2.lock")  # grader/gpu_locks.py
CONTEXT_LINE = "contexts-line.lock"  # where programs wait when every turn is taken
CONTEXT_FRONT = "contexts-front.lock"  # the line's front, where the chains of contexts wait


def lock_ids(folder, gpu):
    ids = {}
    for role, name in (("lock", "gpu-%s.lock" % gpu), ("turnstile", "gpu-%s.turnstile" % gpu)) + \
            tuple(("context", name) for name in CONTEXT_TURNS):
        path = os.path.join(folder, name)
        st = os.stat(path)
        # /proc/locks names a file MAJOR:MINOR:INODE, the device's numbers in hexadecimal.
        ids["%02x:%02x:%d" % (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)] = role
    for role, name in (("line", CONTEXT_LINE), ("front", CONTEXT_FRONT)):
        try:  # a folder made before there was a line, or its front, holds none
            st = os.stat(os.path.join(folder, name))
            ids["%02x:%02x:%d" % (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)] = role
        except FileNotFoundError:
            pass
    return ids


def sample(ids):
    """(state, holders, makers, waiting, alone): the state the locks are in now ('alone',
    'drain', 'shared' or 'free'), how many programs hold the GPU's lock shared (run untimed
    tests) meanwhile, the programs (pids) that hold a turn to make a context, how many wait for
    one (in line, or for a turn), and the program that holds the GPU alone (None if none)."""
    held = {"lock": [], "turnstile": [], "context": [], "line": [], "front": []}
    waiting, alone = 0, None
    with open("/proc/locks") as f:
        for line in f:
            fields = line.split()
            if len(fields) > 6 and fields[1] == "->":  # a waiter: its fields one further on
                waiting += ids.get(fields[6]) in ("context", "line", "front")
                continue
            if len(fields) < 6:
                continue
            role = ids.get(fields[5])
            if role == "context":
                held[role].append(fields[4])  # the pid
            elif role is not None:
                held[role].append(fields[3])  # READ or WRITE
                if role == "lock" and fields[3] == "WRITE":
                    alone = fields[4]
    holders = held["lock"].count("READ")
    makers = frozenset(held["context"])
    if "WRITE" in held["lock"]:
        return "alone", holders, makers, waiting, alone
    if "WRITE" in held["turnstile"]:
        return "drain", holders, makers, waiting, alone
    return ("shared" if holders else "free"), holders, makers, waiting, alone


def process_argv(pid):
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            return f.read().decode(errors="replace").split("\0")
    except OSError:
        return []


def parent_of(pid):
    try:
        with open("/proc/%s/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[1]  # after the name, which may hold spaces
    except (OSError, IndexError):
        return "0"


def build_folder(path):
    """build/A/B of a path under build/, else the path itself."""
    parts = path.split("/")
    return "/".join(parts[parts.index("build"):][:3]) if "build" in parts else path


def where_begun(pid):
    """(place, role) of a program that took a turn to make a context: the folder its grading
    writes to (an ancestor's --out) or its test host's learner module is in, and its own name
    (host, a test host, which takes the turn for its worker's context too; or what else)."""
    argv = process_argv(pid)
    role = os.path.basename(argv[0]) if argv and argv[0] else "gone"
    learner = None
    for _ in range(12):
        if not argv:
            break
        if "--out" in argv[:-1] and any(a.endswith("grade.py") for a in argv):
            return build_folder(argv[argv.index("--out") + 1]), role
        if learner is None and "--learner" in argv[:-1]:
            learner = argv[argv.index("--learner") + 1]
        pid = parent_of(pid)
        argv = process_argv(pid) if pid != "0" else []
    return (build_folder(os.path.dirname(learner)) if learner else "(not known)"), role


def main(argv):
    every_ms = 2.0
    if "--every" in argv:
        i = argv.index("--every")
        every_ms = float(argv[i + 1])
        del argv[i:i + 2]
    if len(argv) not in (2, 3):
        sys.exit("usage: gpu_lock_timeline.py LOCK_DIR [GPU] [--every MS]")
    folder, gpu = argv[1], argv[2] if len(argv) == 3 else "0"
    while True:  # the run makes the files once its first test program starts
        try:
            ids = lock_ids(folder, gpu)
            break
        except FileNotFoundError:
            time.sleep(0.05)
    stop = []
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    seconds = {"alone": 0.0, "drain": 0.0, "shared": 0.0, "free": 0.0}
    holder_seconds = dict.fromkeys(seconds, 0.0)
    spells = {"alone": [], "drain": []}
    # The context turns: seconds with n turns taken, waiters times seconds, contexts begun.
    turn_seconds = [0.0] * (len(CONTEXT_TURNS) + 1)
    waiter_seconds, begun, makers, places = 0.0, 0, frozenset(), {}
    alone_places, alone_holder, alone_place = {}, None, None  # seconds alone by place
    state, holders, waiting, since = None, 0, 0, time.monotonic()
    started = last = since
    while not stop:
        now_state, now_holders, now_makers, now_waiting, now_alone = sample(ids)
        now = time.monotonic()
        if state == "alone" and alone_place is not None:
            alone_places[alone_place] = alone_places.get(alone_place, 0.0) + now - last
        if now_alone is not None and now_alone != alone_holder:
            alone_place = where_begun(now_alone)[0]
        alone_holder = now_alone
        if state is not None:
            seconds[state] += now - last
            holder_seconds[state] += holders * (now - last)
            turn_seconds[min(len(makers), len(CONTEXT_TURNS))] += now - last
            waiter_seconds += waiting * (now - last)
        for pid in now_makers - makers:
            begun += 1
            where = where_begun(pid)
            places[where] = places.get(where, 0) + 1
        holders, makers, waiting = now_holders, now_makers, now_waiting
        if now_state != state:
            if state in spells:
                spells[state].append(now - since)
            state, since = now_state, now
        last = now
        time.sleep(every_ms / 1e3)
    total = last - started
    print("gpu_lock_timeline: %.1f s sampled every %g ms on GPU %s" % (total, every_ms, gpu))
    for name, s in seconds.items():
        print("  %-7s %7.1f s  %5.1f%%  %5.1f programs running untimed tests, on average" % (
            name, s, 100 * s / total if total else 0, holder_seconds[name] / s if s else 0))
    for name, lengths in spells.items():
        if lengths:
            lengths.sort()
            print("  %s: %d spells, mean %.0f ms, median %.0f ms, longest %.0f ms" % (
                name, len(lengths), 1e3 * sum(lengths) / len(lengths),
                1e3 * lengths[len(lengths) // 2], 1e3 * lengths[-1]))
    if total:
        print("  context turns: %d contexts begun (%.1f a second); all %d turns taken %.1f%% of "
              "the time, none %.1f%%; %.2f programs waiting for a turn, on average" % (
                  begun, begun / total, len(CONTEXT_TURNS),
                  100 * turn_seconds[len(CONTEXT_TURNS)] / total, 100 * turn_seconds[0] / total,
                  waiter_seconds / total))
    print_places(places)
    for place in sorted(alone_places, key=lambda p: (-alone_places[p], p)):
        print("    the GPU alone for %s: %.1f s" % (place, alone_places[place]))
    return 0


def print_places(places):
    """Contexts begun by place, most first, each with its count by role."""
    totals = {}
    for (place, _), count in places.items():
        totals[place] = totals.get(place, 0) + count
    for place in sorted(totals, key=lambda p: (-totals[p], p)):
        roles = ", ".join("%s %d" % (role, count) for (where, role), count in sorted(places.items())
                          if where == place)
        print("    contexts begun by %s: %d (%s)" % (place, totals[place], roles))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
