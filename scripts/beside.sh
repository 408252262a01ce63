#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# scripts/beside.sh CPU COMMAND [ARG...]
#
# COMMAND on CPU alone, at SCHED_IDLE, its temporary files in memory: work that
# may run beside the measuring tests (make test runs the tests marked beside this
# way) without reaching the CPU they measure. Alone on CPU: a cpuset cgroup
# of its own (cgroup v1's cpuset hierarchy, or v2's where the root delegates
# cpuset), so nothing it starts can leave CPU, whatever sched_setaffinity it or
# a tuning daemon asks (tuned sets every task's affinity when a profile isolates
# CPUs); where neither is there, taskset, said on stderr. SCHED_IDLE: it runs
# only when nothing else wants CPU, and a task that wakes there takes the CPU
# from it at once. In memory: TMPDIR is a folder of /dev/shm (where it is
# there; open to every user, sticky, as /tmp), so its files never wake the
# disk, whose interrupts may land on the measured CPU. Its exit status is COMMAND's (130 after Ctrl-C, 143 after
# SIGTERM, 129 after SIGHUP); the cgroup and the folder are removed after it,
# also then (COMMAND gets the signal too). SIGUSR1: the measuring is over, COMMAND
# and what it started leave SCHED_IDLE for SCHED_OTHER (beside a busy process on
# CPU, SCHED_IDLE gets a few thousandths of it: the tests beside would take hours).
set -u

if [ $# -lt 2 ]; then
    echo "usage: scripts/beside.sh CPU COMMAND [ARG...]" >&2
    exit 2
fi
cpu=$1
shift

# Ctrl-C reaches COMMAND with the rest of the terminal's process group (pytest
# then ends its run and says so: a command started with & by a shell without job
# control ignores SIGINT unless it is set back, env --default-signal); SIGTERM
# and SIGHUP are passed on. Set before anything is made: a signal at any moment
# ends COMMAND (or it never starts) and then this script, which removes what it
# made (a signal before the traps killed the script and left
# COMMAND, its cgroup and its folder behind)
child=
sig=
trap 'sig=130' INT
trap 'sig=143; [ -z "$child" ] || kill -TERM $child 2>/dev/null' TERM
trap 'sig=129; [ -z "$child" ] || kill -HUP $child 2>/dev/null' HUP
trap 'to_other' USR1
case $cpu in
    *[!0-9]* | "") echo "scripts/beside.sh: '$cpu' is not a CPU number; give one, e.g. 0" >&2
                   exit 2 ;;
esac

# where the cpuset controller is mounted, found as jtr's tuning finds it
# (tune/knobs.py cpuset_root): cgroup v2 where its root delegates cpuset, else v1's
group=
base=
v2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
v1=$(awk '$3 == "cgroup" && ("," $4 ",") ~ /,cpuset,/ { print $2; exit }' /proc/mounts)
if [ -n "$v2" ] && grep -qw cpuset "$v2/cgroup.subtree_control" 2>/dev/null; then
    base=$v2
elif [ -n "$v1" ] && [ -e "$v1/cpuset.mems" ]; then
    base=$v1
fi
if [ -n "$base" ] && mkdir "$base/jtr-beside.$$" 2>/dev/null; then
    group=$base/jtr-beside.$$
    # v1 takes no task before its memory nodes are set; v2 inherits them
    if [ -e "$base/cpuset.mems" ] && ! cat "$base/cpuset.mems" >"$group/cpuset.mems"; then
        rmdir "$group"
        group=
    fi
    if [ -n "$group" ] && ! echo "$cpu" >"$group/cpuset.cpus" 2>/dev/null; then
        echo "scripts/beside.sh: CPU $cpu is not one this machine's cpusets hold" >&2
        rmdir "$group"
        exit 2
    fi
fi

tmp=
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    # as /tmp is: the tests run programs as other users (nobody) from there
    tmp=$(mktemp -d /dev/shm/jtr-beside.XXXXXX) && chmod 1777 "$tmp" || tmp=
fi

# to_other - COMMAND and every task under it at SCHED_OTHER (twice: a task
# forked meanwhile by one not yet changed is caught the second time)
tree() {
    echo "$1"
    for c in $(pgrep -P "$1"); do
        tree "$c"
    done
}
to_other() {
    [ -n "$child" ] || return 0
    for _ in 1 2; do
        for p in $(tree "$child"); do
            chrt --other -a -p 0 "$p" >/dev/null 2>&1
        done
    done
    echo "== SCHED_OTHER from here on: the measuring is over" >&2
}

cleanup() {
    if [ -n "$group" ] && [ -d "$group" ]; then
        # what COMMAND left running (nothing, when it ends as it should)
        for p in $(cat "$group/cgroup.procs" 2>/dev/null); do
            kill -9 "$p" 2>/dev/null
        done
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            rmdir "$group" 2>/dev/null && break
            sleep 0.1
        done
    fi
    [ -n "$tmp" ] && rm -rf "$tmp"
}

if [ -n "$sig" ]; then
    # a signal before COMMAND started: it does not start
    cleanup
    exit $sig
fi
if [ -n "$group" ]; then
    echo "== on CPU $cpu at SCHED_IDLE (cpuset $group)${tmp:+, TMPDIR=$tmp}" >&2
    # the child joins the cgroup itself, then becomes COMMAND
    sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec chrt --idle 0 "$@"' sh "$group" \
        env --default-signal=INT ${tmp:+TMPDIR="$tmp"} "$@" &
else
    echo "== on CPU $cpu at SCHED_IDLE (taskset: no cpuset cgroup here, a tuning" \
         "daemon could move it)${tmp:+, TMPDIR=$tmp}" >&2
    taskset -c "$cpu" chrt --idle 0 env --default-signal=INT ${tmp:+TMPDIR="$tmp"} "$@" &
fi
child=$!
# a signal while it was being started: passed on until it takes (in the moment
# after the fork the child still has this shell's handlers, which swallow it)
case $sig in
    143) name=TERM ;;
    129) name=HUP ;;
    *) name= ;;
esac
running() {  # not ended (an ended child stays a zombie until waited for)
    [ "$(sed 's/.*) //' "/proc/$child/stat" 2>/dev/null | cut -c1)" != Z ] &&
        kill -0 $child 2>/dev/null
}
if [ -n "$name" ]; then
    while running; do
        kill -$name $child 2>/dev/null
        sleep 0.1
    done
fi
rc=0
wait $child || rc=$?
# a signal interrupts a wait (USR1's: 138, COMMAND going on); the last is
# COMMAND's own end
while kill -0 $child 2>/dev/null || [ "$rc" -eq 138 ]; do
    rc=0
    wait $child || rc=$?
done
cleanup
exit ${sig:-$rc}
