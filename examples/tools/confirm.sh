#!/usr/bin/env bash
# A one-shot local tool that asks before it acts (JP's `needs_input`): on the first
# run it prints a question; jp-actors answers it (from config, or by asking you at the
# terminal) and runs the tool again with the answers in JP_TOOL_ANSWERS.
set -eu
if [ -z "${JP_TOOL_ANSWERS:-}" ]; then
  echo '{"type":"needs_input","question":{"id":"proceed","text":"Delete the build directory?","answer_type":{"type":"boolean"},"default":false}}'
  exit 0
fi
case "$JP_TOOL_ANSWERS" in
  *'"proceed":true'*) echo '{"type":"success","content":"deleted (pretend)"}' ;;
  *) echo '{"type":"success","content":"kept the build directory"}' ;;
esac
