#!/usr/bin/env bash
# slurm-test-cluster.sh - run a command against a private one-node Slurm cluster on this machine.
#
#   dev/slurm-test-cluster.sh DIR COMMAND [ARG...]
#
# Starts a munged, a slurmctld and a slurmd of their own, with configuration,
# key, socket, state, spool and logs in DIR (an empty folder, kept afterwards
# for its logs), listening on 127.0.0.1 on ports that were free; runs COMMAND
# with SLURM_CONF pointing at that configuration, so sbatch, squeue and
# scontrol talk to this cluster alone; then cancels what is left of its jobs and
# stops the three daemons, whatever happened (an error, a signal, a timeout).
# The daemons have sessions of their own, so that a signal to this script's
# process group (Ctrl-C, timeout) reaches them only through this script, in order.
# Exits with COMMAND's status; 3 when the cluster did not start (the reason,
# and the logs' last lines, on stderr).
#
# It is what the self-test uses to submit grader/slurm-grade.sh for real. It
# needs root (slurmd runs jobs as their owner) and Debian's slurm-wlm and munge
# (`make deps-cluster`), and no systemd: each daemon runs in the foreground, as
# a child of this script. The node declares no GPU as a resource, so a job
# that asks for one (slurm-grade.sh's --gres=gpu:1) is submitted with
# --gres=none; its task then finds the GPUs as make grade does anywhere. The
# settings are those that made a one-node cluster work on Debian 12 without
# systemd: cgroup v1 named (autodetection fails on a pure cgroup v2 host), and
# no cgroup-based process tracking, task binding or accounting.
set -uo pipefail
if [[ $# -lt 2 || ! -d $1 ]]; then
    echo "usage: $0 DIR COMMAND [ARG...]   (DIR an existing, empty folder)" >&2
    exit 2
fi
dir=$(cd "$1" && pwd)
shift
for program in munged mungekey slurmctld slurmd sbatch scontrol; do
    if ! command -v "$program" >/dev/null 2>&1; then
        echo "slurm-test-cluster: $program is not installed (make deps-cluster installs Slurm and munge)" >&2
        exit 3
    fi
done
if [[ $(id -u) -ne 0 ]]; then
    echo "slurm-test-cluster: slurmd runs jobs as the user who submitted them, so it needs root" >&2
    exit 3
fi

# munged refuses a socket in a folder that others cannot reach: every folder above must be searchable.
chmod 755 "$dir"
mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
chmod 755 "$dir/munge"
node=$(hostname -s)
free_ports=($(python3 -c '
import socket
held = [socket.socket() for _ in range(2)]
for s in held:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in held))'))
# CPUs and memory exactly as slurmd finds them, or it marks the node invalid.
hardware=$(slurmd -C | sed -n 's/^NodeName=[^ ]* \(.*\) RealMemory=\([0-9]*\).*/\1 RealMemory=\2/p')
[[ -n $hardware ]] || { echo "slurm-test-cluster: slurmd -C did not describe this machine" >&2; exit 3; }

export SLURM_CONF=$dir/slurm.conf
cat >"$SLURM_CONF" <<EOF
# A one-node cluster for dev/slurm-test-cluster.sh; everything it keeps is in $dir.
ClusterName=coursetest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=${free_ports[0]}
SlurmdPort=${free_ports[1]}
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobs.txt
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerParameters=batch_sched_delay=0
MailProg=/bin/true
MpiDefault=none
ReturnToService=2
MinJobAge=600
NodeName=$node NodeAddr=127.0.0.1 $hardware State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
printf 'CgroupPlugin=cgroup/v1\n' >"$dir/cgroup.conf"

pids=() command_pid=
# stop: cancel this cluster's jobs, then end the daemons (TERM, then KILL after 10 s).
stop() {
    trap '' INT TERM # a second signal (timeout sends one to the group too) must not cut this short
    trap - EXIT
    [[ -n $command_pid ]] && kill -TERM "$command_pid" 2>/dev/null
    if [[ -n ${pids[*]} ]]; then
        timeout 5 scancel --full --quiet --user=root >/dev/null 2>&1
        for _ in $(seq 50); do
            [[ -z $(timeout 2 squeue --noheader 2>/dev/null) ]] && break
            sleep 0.1
        done
        kill -TERM "${pids[@]}" 2>/dev/null
        for _ in $(seq 100); do
            kill -0 "${pids[@]}" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "${pids[@]}" 2>/dev/null
        wait "${pids[@]}" 2>/dev/null
    fi
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# fail WHY LOG: the cluster did not start.
fail() {
    echo "slurm-test-cluster: $1" >&2
    [[ -f $2 ]] && tail -n 15 "$2" | sed 's/^/    /' >&2
    exit 3
}

mungekey --create --keyfile="$dir/munge/munge.key" >/dev/null 2>&1 ||
    fail "mungekey could not create a key" /dev/null
setsid munged --foreground --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/munged.seed" \
    --log-file="$dir/log/munged.log" >>"$dir/log/munged.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do
    [[ -S $dir/munge/munge.socket ]] && break
    kill -0 "${pids[0]}" 2>/dev/null || fail "munged stopped" "$dir/log/munged.log"
    sleep 0.1
done
[[ -S $dir/munge/munge.socket ]] || fail "munged made no socket in 5 s" "$dir/log/munged.log"

setsid slurmctld -D -i >>"$dir/log/slurmctld.log" 2>&1 &
pids+=($!)
setsid slurmd -D -N "$node" >>"$dir/log/slurmd.log" 2>&1 &
pids+=($!)
for _ in $(seq 150); do
    state=$(sinfo --noheader --nodes="$node" --format=%T 2>/dev/null)
    [[ $state == idle ]] && break
    kill -0 "${pids[1]}" 2>/dev/null || fail "slurmctld stopped" "$dir/log/slurmctld.log"
    kill -0 "${pids[2]}" 2>/dev/null || fail "slurmd stopped" "$dir/log/slurmd.log"
    sleep 0.2
done
[[ $state == idle ]] || fail "the node is not idle after 30 s (it is '${state:-unknown}')" \
    "$dir/log/slurmctld.log"

# In the background, so that a signal reaches the trap at once rather than after COMMAND.
"$@" &
command_pid=$!
wait "$command_pid"
