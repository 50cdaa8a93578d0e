#!/usr/bin/env bash
# CTest (bench_cpu): `--cpu FILE` on jp-floor and `jp-bench worker` writes where the
# time went in one format (bench/cpu_use.hpp): per operation, each thread of the
# process (jp-actors' io thread among them, `jp.io`), their sum, the process's and its
# children's CPU. Checks the lines and that the counted threads ran; no figure's size.
#   cpu_test.sh JP_BENCH JP_FLOOR
set -euo pipefail
bench=$1
floor=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "bench_cpu: $1"; exit 1; }
num='[0-9]+\.[0-9]+'
check() { # FILE HEADER THREAD_NAME
  local f=$1
  [ -s "$f" ] || fail "$f was not written"
  grep -Eqx "# where the time went: $2, us per op \(wall $num\)" "$f" || fail "$f: no header '$2': $(cat "$f")"
  grep -Eq "^thread $3 [0-9]+ on_cpu $num runqueue $num slices $num preempted $num$" "$f" ||
    fail "$f: no line for a $3 thread: $(cat "$f")"
  grep -Eqx "threads on_cpu $num runqueue $num" "$f" || fail "$f: no threads' sum: $(cat "$f")"
  grep -Eqx "process user $num sys $num" "$f" || fail "$f: no process line: $(cat "$f")"
  grep -Eqx "children user $num sys $num" "$f" || fail "$f: no children line: $(cat "$f")"
  awk '$1 == "threads" && $3 + 0 > 0 {ok = 1} END {exit !ok}' "$f" || fail "$f: its threads did not run: $(cat "$f")"
}
"$floor" W1 --n 10 --cpu "$dir/floor.txt" >/dev/null
check "$dir/floor.txt" "W1, 20 ops" jp-floor # W1's floor spawns twice a run
"$bench" worker W1 --n 10 --floor "$floor" --cpu "$dir/jp.txt" >/dev/null
check "$dir/jp.txt" "W1, 10 ops" jp.io
# W9's other side is another process: refused on both sides, saying why.
if err=$("$bench" worker W9 --n 1 --floor "$floor" --cpu "$dir/w9.txt" 2>&1); then
  fail "worker W9 --cpu was taken"
fi
grep -q -- "--cpu is W1-W8's only" <<<"$err" || fail "the W9 refusal does not say why: $err"
if err=$("$floor" W9 --cpu "$dir/w9.txt" 2>&1); then
  fail "jp-floor W9 --cpu was taken"
fi
grep -q -- "--cpu is W1-W7's only" <<<"$err" || fail "jp-floor's W9 refusal does not say why: $err"
# A file that cannot be written is an error that names it.
if err=$("$bench" worker W1 --n 2 --floor "$floor" --cpu "$dir/no/such/dir.txt" 2>&1); then
  fail "an unwritable --cpu file passed"
fi
grep -q -- "--cpu $dir/no/such/dir.txt" <<<"$err" || fail "the write error does not name the file: $err"
echo "bench_cpu: floor and jp-actors write where the time went, per op, in one format"
