#!/usr/bin/env bash
# CTest (bench_timeline): `jp-bench timeline` on a scheduler trace made by hand
# (bench/testdata/timeline.txt): four calls of the thread 100, as its comments say:
# a child preempted before its exec, the spawner asleep at an exit or on a CPU,
# another thread's child inside a call, an exec timed before its fork, a switch-in
# the trace missed; and a thread that never execs, an event it does not read, lines
# out of time order, a process name with "] ". Each step's least, median and p90 as
# the trace has them; a trace without calls refused, saying what to record.
#   timeline_test.sh JP_BENCH TESTDATA
set -euo pipefail
bench=$1
data=$2
fail() { echo "bench_timeline: $1"; exit 1; }
out=$("$bench" timeline "$data/timeline.txt")
expect() { # LABEL MIN P50 P90
  grep -Eq "^$1 +$2 +$3 +$4$" <<<"$out" || fail "expected '$1' $2 $3 $4 in: $out"
}
grep -q "^4 calls of the thread 100 " <<<"$out" || fail "not four calls of the thread 100: $out"
expect "fork to exec done \(the spawn\)" -1.0 100.0 100.0
expect "  of which the child runnable, off a CPU" 0.0 20.0 20.0
expect "exec done to exit \(the program\)" 400.0 400.0 441.0
expect "exit to the spawner on a CPU" 0.0 40.0 40.0
expect "the spawner on a CPU to its next fork" 60.0 60.0 60.0
expect "fork to next fork \(a call\)" 540.0 600.0 600.0
expect "the spawner's wake-up events after the exit" 0.0 1.0 1.0
grep -q "^(1 calls left out of the exit's two rows" <<<"$out" || fail "the call without a switch-in not said: $out"
# A trace with no calls in it: refused, naming what to record.
empty=$(mktemp)
trap 'rm -f "$empty"' EXIT
grep -v sched_process_exec "$data/timeline.txt" >"$empty"
if err=$("$bench" timeline "$empty" 2>&1); then
  fail "a trace without execs was summed up: $err"
fi
grep -q "record sched_process_fork" <<<"$err" || fail "the refusal does not say what to record: $err"
echo "bench_timeline: a hand-made trace's calls step by step, a trace without calls refused"
