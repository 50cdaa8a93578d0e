#!/usr/bin/env bash
# A one-shot tool that asks in turn, one question per run (JP's needs_input): `first`,
# then `second`, then it reports the answers it was given. With `loop` as its
# argument it asks `again` on every run, however often it is answered.
set -eu
answers="${JP_TOOL_ANSWERS:-}"
ask() {
  printf '{"type":"needs_input","question":{"id":"%s","text":"%s","answer_type":{"type":"text"}}}\n' "$1" "$2"
  exit 0
}
if [ "${1:-}" = loop ]; then
  ask again "Once more?"
fi
case "$answers" in *'"first"'*) ;; *) ask first "First?" ;; esac
case "$answers" in *'"second"'*) ;; *) ask second "Second?" ;; esac
case "$answers" in
  *'"first":"one"'*'"second":"two"'* | *'"second":"two"'*'"first":"one"'*) result="one, then two" ;;
  *) result="unexpected answers" ;;
esac
printf '{"type":"success","content":"%s"}\n' "$result"
