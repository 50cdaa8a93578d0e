// The CLI's per-tool views (tool-to-promise: views apart from tools): the live line
// of a running handle, drawn by its kind from the progress it reports
// (HandleProgress), and the one line a finished call gets. Handles only report;
// what a person sees is decided here.
#pragma once

#include <string>

#include "messages/handle_summary.hpp"
#include "messages/json.hpp"

namespace jp {

/// What the display knows of a handle beyond its report: the arguments of the call
/// that spawned it (a shell's command), and whether its tool runs on a terminal.
struct HandleOrigin {
  Json arguments = Json::object();
  bool terminal = false;
};

/// One line for a terminal: no control characters, no line breaks, at most `width`
/// columns (code points), cut on a character's boundary with an ellipsis.
std::string terminal_line(const std::string& text, size_t width);

/// A duration as the views write it: 3.1 ms, 4.2 s, 1m15s.
std::string duration_text(double ms);

/// What a sub-agent or a foreach has done so far ("3 responses, 5 tool calls",
/// "3/10 done, 2 running"); "" for other handles.
std::string progress_counts(const HandleProgress& p);

/// A running handle's live line, by its kind:
///   shell/process  ⋯ shell `w` 4.2 s $ make test │ last output line
///   terminal       ⋯ repl `r` 4.2 s ▌ last screen line
///   agent          ⋯ agent `a` 12 s · 3 responses, 5 tool calls │ last line
///   foreach        ⋯ foreach `f` 8 s · 3/10 done, 2 running
///   MCP call       ⋯ srv__build `b` 2 s │ last progress message
///   remote         ⋯ shell `w` on build1 4.2 s │ last output line
/// Lines are made safe for a terminal and cut to `width` columns.
std::string in_flight_line(const HandleSummary& h, const HandleOrigin& origin, size_t width = 120);

/// A call's line as it starts: the tool, the handle it names, and what it runs (a
/// command) or its arguments:
///   → shell `w` spawn $ make test
///   → await {"all":["w"]}
std::string started_line(const std::string& tool, const Json& arguments, size_t width = 120);

/// A finished call's line: ✓ or ✗, the tool and the handle it names, how it ended
/// (its state, exit status or error), the size of what it said, and how long it took:
///   ✓ shell `b` · stopped · 6 B · 3.1 ms
///   ✗ shell · exited with status 2 · 40 B · 1.2 s
std::string completed_line(const std::string& tool, const Json& arguments, bool ok, const std::string& content,
                           double elapsed_ms, size_t width = 120);

} // namespace jp
