#!/usr/bin/env bash
# CTest (bench_layers): `jp-bench layers` runs W1 in its layers (the floor with its
# own group and its own session, our launcher, the process layer, the runtime) and
# prints each layer's µs a call and what it adds to the one named. Checks the rows
# and that each layer ran; no figure's size. Bad options are refused.
#   layers_test.sh JP_BENCH JP_FLOOR
set -euo pipefail
bench=$1
floor=$2
fail() { echo "bench_layers: $1"; exit 1; }
out=$("$bench" layers --floor "$floor" --n 5 --rounds 2 2>/dev/null) || fail "layers failed: $out"
num='-?[0-9]+\.[0-9]'
grep -q "^W1 in layers: 5 calls a round, 2 rounds" <<<"$out" || fail "no header: $out"
row() { # NAME AGAINST ("" for none)
  local line
  line=$(grep -F -- "$1 " <<<"$out") || fail "no row '$1': $out"
  [ -n "$2" ] && { grep -qF -- " on $2" <<<"$line" || fail "row '$1' is not against '$2': $line"; }
  # median and min, both above zero: the layer ran
  awk '{for (i = 1; i <= NF; ++i) if ($i ~ /^[0-9]+\.[0-9]$/ && $i + 0 > 0) n++} END {exit n < 2}' <<<"${line//[()]/ }" ||
    fail "row '$1' has no median and min: $line"
}
row "floor (posix_spawn, own group)" ""
row "floor (posix_spawn, own session)" "floor (posix_spawn, own group)"
row "launcher (ours, own group)" "floor (posix_spawn, own group)"
row "launcher (ours, own session)" "floor (posix_spawn, own session)"
# The process layer against the launcher that starts children as jp-actors does here.
if grep -q "their own sessions (it has a terminal)" <<<"$out"; then kind=session; else kind=group; fi
grep -q "their own ${kind}s" <<<"$out" || fail "the header does not say how children start: $out"
row "process layer (io thread, Asio)" "launcher (ours, own $kind)"
row "runtime (W1 through the actors)" "process layer (io thread, Asio)"
[ "$(grep -c '^' <<<"$out")" = 7 ] || fail "not a header and six rows: $out"
# A count out of range is refused, naming the option.
if err=$("$bench" layers --floor "$floor" --n 0 2>&1); then
  fail "--n 0 was taken"
fi
grep -q -- "--n" <<<"$err" || fail "the --n refusal does not name it: $err"
echo "bench_layers: ok"
