"""gpu_locks.py - the lock files through which the test programs on one GPU share it, opened by
make grade for each test host (harness/host/gpu_share.h says what each is for).

A test that times the GPU runs alone on it, and CUDA contexts are made three at a time at most.
Each test host gets the files as open descriptors, never in its view: the learner's code, beside
it, could otherwise hold them. harness/gpu_locks.sh names them alike for make check and make
test, so that runs given one COURSE_LOCK_DIR share one set per GPU.
"""

import os


def folder(scratch):
    """Where the lock files are: COURSE_LOCK_DIR when the caller shares its own with other runs
    on this machine (make test does), else the scratch folder's."""
    shared = os.environ.get("COURSE_LOCK_DIR", "")
    return shared if os.path.isdir(shared) else os.path.join(scratch, "locks")


def paths(scratch, gpu):
    """{VARIABLE: path} for the GPU's lock files, made where they are not yet."""
    where = folder(scratch)
    if not os.path.isdir(where):
        os.makedirs(where, exist_ok=True)
        os.chmod(where, 0o755)
    name = "".join(c if c.isalnum() else "-" for c in str(gpu))
    files = {"COURSE_GPU_LOCK": "gpu-%s.lock" % name,
             "COURSE_GPU_TURNSTILE": "gpu-%s.turnstile" % name,
             "COURSE_CONTEXT_LOCK": "contexts.lock",
             "COURSE_CONTEXT_LOCK_1": "contexts-1.lock",  # CONTEXT_TURNS in gpu_share.h
             "COURSE_CONTEXT_LOCK_2": "contexts-2.lock",
             "COURSE_CONTEXT_LINE": "contexts-line.lock",  # the wait when all are taken
             "COURSE_CONTEXT_FRONT": "contexts-front.lock"}  # the line's front, for chains
    found = {}
    for variable, file_name in files.items():
        found[variable] = os.path.join(where, file_name)
        with open(found[variable], "a"):
            pass
        try:
            os.chmod(found[variable], 0o644)
        except OSError:  # another user's, in a shared folder: they made it readable
            pass
    return found


def open_for_host(scratch, gpu):
    """({VARIABLE_FD: descriptor}, [descriptors]): the GPU's lock files opened for one test
    host, each an open file of its own (flock locks an open file, not a path)."""
    variables, fds = {}, []
    for variable, path in paths(scratch, gpu).items():
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        fds.append(fd)
        variables[variable + "_FD"] = str(fd)
    return variables, fds
