// The experiment report (DESIGN.md "Scripts"): per agent and sub-agent, where the time
// went and what was done, rebuilt from events alone -- `run`/`query --json` events
// or a stored conversation's -- so the report of a run and the report of its log are
// the same by construction.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "../../messages/json.hpp"

namespace jp {

/// One agent's figures (or the run's totals).
struct AgentFigures {
  std::string agent;             // its path, e.g. "main/worker1"
  double wall_ms = 0;            // its turns' starts to their ends
  double model_ms = 0;           // waiting on the model (request to end of stream)
  double tools_ms = 0;           // with at least one of its tool calls running
  int64_t round_trips = 0;       // assistant responses
  int64_t tool_calls = 0;
  std::map<std::string, int64_t> calls_by_tool;
  int64_t handles_spawned = 0;   // stateful handles its turns started
  int64_t peak_handles = 0;      // most of its handles live at once (-1: unknown)
  int64_t tokens_in = -1;        // where the provider reported usage (-1: it did not)
  int64_t tokens_out = -1;
  int64_t errors = 0;            // failed tool calls and failed turns
  friend bool operator==(const AgentFigures&, const AgentFigures&) = default;
};

/// One run: its agents in order of first appearance, and totals (sums; the wall time
/// is the run's; peaks are per agent only, so the total's is -1).
struct ExperimentReport {
  std::vector<AgentFigures> agents;
  AgentFigures total;
  // What makes the figures partial: agents whose turn the log leaves open (a run
  // killed, a log cut short: figures so far), and a turn the user interrupted.
  std::vector<std::string> cut_short;
  bool interrupted = false;
  friend bool operator==(const ExperimentReport&, const ExperimentReport&) = default;
};

/// Builds reports from events, one at a time. A `run_end` ends a run: a log of a
/// repeated experiment gives one report per run.
class ReportBuilder {
public:
  /// An event: a `--json` line or a stored conversation's line (parsed). Events of
  /// other kinds, or without a readable time, count for what they can.
  void add(const Json& event);
  /// The runs so far; events after the last run_end make one more.
  std::vector<ExperimentReport> reports() const;
  /// Whether an event so far was of a kind a report counts (a turn, a model round,
  /// a tool call, a run's end): a file of none is no log of a run or a conversation.
  bool counted_any() const { return counted_any_; }

private:
  struct Interval {
    double start, end;
  };
  struct Agent {
    AgentFigures figures;
    double first = -1, last = -1;           // its events' times (ms since the epoch)
    double turn_started = -1;               // the open turn's start
    double request_at = -1;                 // a stored conversation's open chat_request
    std::map<std::string, double> calls_at; // a stored conversation's open tool calls
    std::map<std::string, std::string> call_actions; // call id -> action, for spawns
    std::vector<Interval> tool_spans;
    std::vector<Interval> turn_spans; // a run's wall without run_end: its turns, not the time between
  };
  struct Run {
    std::vector<std::string> order;
    std::map<std::string, Agent> agents;
    double run_ms = -1; // run_end's elapsed_ms
    bool interrupted = false; // a turn_end said so
  };
  Agent& agent(const std::string& path);
  ExperimentReport finish(const Run& run) const;

  std::vector<Run> done_;
  Run open_;
  bool counted_any_ = false;
};

/// The report as JSON: {"agents":[...],"total":{...}}; unknown figures are left out.
Json report_json(const ExperimentReport& report);

/// The report as a table for a transcript's end.
std::string report_table(const ExperimentReport& report);

/// Several runs of one experiment: each figure of each agent as
/// {"min","median","max"} over the runs ({"runs":N,"agents":[...],"total":{...}}).
Json repeated_report_json(const std::vector<ExperimentReport>& runs);

/// The same as a table: each cell the median, then [min–max] where they differ.
std::string repeated_report_table(const std::vector<ExperimentReport>& runs);

/// The report of `runs` (not empty): one run's as is, several as min/median/max.
Json runs_report_json(const std::vector<ExperimentReport>& runs);
std::string runs_report_table(const std::vector<ExperimentReport>& runs);

/// An RFC 3339 time ("2026-11-23T04:24:24.166Z") as ms since the epoch; -1 if it is
/// not one.
double rfc3339_ms(const std::string& text);

} // namespace jp
