#!/bin/sh
# sandbox-mounts.sh - run inside the grader's private mount namespace: make the
# protected folders read-only, keep the scratch folder writable, run the command.
#
#   sandbox-mounts.sh SCRATCH PROTECTED... -- COMMAND [ARGUMENT...]
#
# The mounts belong to the namespace, so they vanish with it. A remount must
# keep the flags the kernel locks (nosuid, nodev, noexec, atime), hence
# remount_with below.
set -eu

remount_with() { # FLAGS PATH: remount PATH, keeping its locked flags
    kept=$(findmnt -no OPTIONS -T "$2" | tr ',' '\n' |
           grep -xE 'nosuid|nodev|noexec|noatime|nodiratime|relatime|strictatime' |
           tr '\n' ',' || true)
    mount -o "remount,bind,$1${kept:+,${kept%,}}" "$2"
}

scratch=$1
shift
while [ "$1" != "--" ]; do
    mount --bind "$1" "$1"
    remount_with ro "$1"
    case "$scratch/" in "$1"/*) nested=yes ;; esac
    shift
done
shift
if [ "${nested:-}" = yes ]; then # the scratch folder lies inside a protected one
    mount --bind "$scratch" "$scratch"
    remount_with rw "$scratch"
fi
exec "$@"
