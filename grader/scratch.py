"""scratch.py - the grader's scratch folder: claimed with a lock, never taken by a pid.

Each run of the grader makes a folder course-grade-XXXX in the scratch parent
and holds an exclusive flock(2) on it for as long as it lives; the kernel
drops the lock when the process ends, however it ends. A folder whose lock
anyone can take, and which says it was claimed, belongs to a grader that is
gone, and is removed. A pid would not do: two graders in different pid
namespaces (containers, Slurm tasks) see each other's pids as free or as
someone else's, and one removed the other's live work.
"""

import fcntl
import os
import shutil
import stat
import tempfile

PREFIX = "course-grade-"
CLAIMED = ".claimed"  # written once the lock is held: a folder without it is being made
_held = []  # the locked descriptors: kept open for the life of the process


def _open_folder(path):
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)


def claim(parent):
    """A new scratch folder in `parent`, locked by this process until it ends."""
    folder = tempfile.mkdtemp(prefix=PREFIX, dir=parent)
    os.chmod(folder, 0o755)
    descriptor = _open_folder(folder)
    fcntl.flock(descriptor, fcntl.LOCK_EX)  # waits while remove_stale looks at it
    with open(os.path.join(folder, CLAIMED), "w") as f:
        f.write("%d\n" % os.getpid())  # for a person's eyes only; nothing reads it
    _held.append(descriptor)
    return folder


def is_live(folder):
    """Whether a running grader holds `folder`."""
    try:
        descriptor = _open_folder(folder)
    except OSError:
        return False
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(descriptor)


def remove_stale(parent):
    """Removes the scratch folders in `parent` of graders that are gone."""
    for entry in os.listdir(parent):
        path = os.path.join(parent, entry)
        if not entry.startswith(PREFIX) or not stat.S_ISDIR(os.lstat(path).st_mode):
            continue
        try:
            descriptor = _open_folder(path)
        except OSError:
            continue
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.path.exists(os.path.join(path, CLAIMED)):
                shutil.rmtree(path, ignore_errors=True)
        except BlockingIOError:
            pass  # a live grader's
        finally:
            os.close(descriptor)
