#!/usr/bin/env bash
# A control tool (io = "control") that reads its stdin before it asks anything on fd 3:
# a one-shot call finds it waiting for input (cli_test). It reports the line it read.
set -u
IFS= read -r line || line="(end of input)"
line=${line//\"/}
echo "{\"type\":\"stopped\",\"result\":\"read $line\"}" >&3
