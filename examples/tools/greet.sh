#!/usr/bin/env bash
# A stateful tool that talks JP's control channel (io = "control", see
# examples/greet.toml): it writes ToolState JSON lines to fd 3 -- first `waiting`
# with its question -- reads the answer as a JSON line on stdin, and ends with a
# `stopped` state whose result uses the answer.
set -eu
echo '{"type":"waiting","question":{"id":"name","text":"Whom shall I greet?","answer_type":{"type":"text"}}}' >&3
IFS= read -r answer # a JSON string, e.g. "world"
answer=${answer#\"}
answer=${answer%\"}
echo "greeting $answer on stdout"
echo "{\"type\":\"stopped\",\"result\":\"hello, $answer\"}" >&3
