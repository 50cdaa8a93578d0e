#!/usr/bin/env bash
# CTest (bench_caf): `jp-bench run --caf KEY=VALUE` refuses what is not one of CAF's
# work-stealing settings (naming the allowed keys) or not a value of the key's kind,
# and hands the others to the jp-actors side, whose actor system runs with them
# (the worker reads them back from its running system and says so).
#   caf_test.sh JP_BENCH JP_FLOOR
set -euo pipefail
bench=$1
floor=$2
fail() { echo "bench_caf: $1"; exit 1; }
expect_refusal() { # ARG PATTERN
  local err
  if err=$("$bench" run --quick --caf "$1" W5 2>&1); then
    fail "--caf $1 was taken"
  fi
  grep -q -- "$2" <<<"$err" || fail "--caf $1: the refusal does not say '$2': $err"
}
expect_refusal bogus=1 "unknown key 'bogus'; allowed: work-stealing.aggressive-poll-attempts"
expect_refusal work-stealing.aggressive-poll-attempts "expected KEY=VALUE"
expect_refusal work-stealing.aggressive-poll-attempts=many "'many' is not a whole number"
expect_refusal work-stealing.relaxed-sleep-duration=5 "'5' is not a duration"
# The worker, as `run` starts it (the settings in its environment):
err=$(JP_BENCH_CAF="work-stealing.aggressive-poll-attempts=777;work-stealing.relaxed-sleep-duration=3ms" \
  "$bench" worker W5 --n 5 --floor "$floor" 2>&1 >/dev/null)
grep -qx "work-stealing.aggressive-poll-attempts=777" <<<"$err" || fail "the worker's system does not run with 777 attempts: $err"
grep -qx "work-stealing.relaxed-sleep-duration=3000us" <<<"$err" || fail "the worker's system does not sleep 3 ms: $err"
# `run` hands them on, the workloads after them still workloads:
out=$("$bench" run --quick --caf work-stealing.aggressive-steal-interval=1000000 W5 2>&1)
grep -qx "work-stealing.aggressive-steal-interval=1000000" <<<"$out" || fail "run did not hand the setting to its workers: $out"
grep -q "^W5 " <<<"$out" || fail "run did not run W5: $out"
echo "bench_caf: bad settings refused by name, good ones in the jp-actors side's running system"
