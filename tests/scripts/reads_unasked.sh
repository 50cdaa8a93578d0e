#!/usr/bin/env bash
# A control tool (io = "control") that reads its stdin before it asks anything on fd 3:
# a one-shot call finds it waiting for input (cli_test). It reports the line it read.
# With `works`: it keeps a reader of its answers on stdin while it works for 3 s, and
# is not waiting for input.
set -u
if [ "${1:-}" = works ]; then
  (while IFS= read -r _; do :; done) <&0 & # (a background job reads /dev/null unless told)
  for _ in $(seq 1 30); do sleep 0.1; done
  kill $! && wait $! # gone before the exit: nothing is left running
  echo '{"type":"stopped","result":"worked"}' >&3
  exit 0
fi
IFS= read -r line || line="(end of input)"
line=${line//\"/}
echo "{\"type\":\"stopped\",\"result\":\"read $line\"}" >&3
