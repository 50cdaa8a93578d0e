// Tool declarations as each provider wants them (DESIGN.md "Schema dialects", RFD 009
// "Schema generation", RFD 037 "Schema"). openai, anthropic and gemini get the flat
// form (an `action` enum + every action's fields, per-action requirements in the
// descriptions and checked at call time), since those services reject a top-level
// oneOf/anyOf; json-schema keeps RFD 009's `oneOf` per action (and await's `anyOf`)
// for clients that take it.
#pragma once

#include <string_view>

#include "../config/config.hpp"
#include "../messages/json.hpp"
#include "../messages/result.hpp"

namespace jp {

enum class dialect : uint8_t { openai, anthropic, gemini, json_schema, mcp };

/// "openai" | "anthropic" | "gemini" | "json-schema" | "mcp"; the error lists the allowed names.
Result<dialect> parse_dialect(std::string_view name);
std::string_view to_string(dialect d);

/// The actions a stateful tool exposes (all four when none are declared).
std::vector<action_kind> declared_actions(const ToolConfig& t);
/// What the model is told of `t`: its summary and description (the summary once),
/// and when a call of it without `action` goes on as a handle, as the config has it.
std::string full_description(const ToolConfig& t);
/// Whether a call of `t` without `action` runs it to completion (RFD 009's one-shot
/// wrapping; DESIGN: `agent` blocks without it): all but a terminal's tool, which may
/// wait for input forever and so runs only as a handle. The schema says so, the turn
/// acts on it.
bool runs_without_action(const ToolConfig& t);

/// The JSON schema of the tool's arguments in dialect d.
Json parameters_schema(const ToolConfig& t, dialect d);
/// One declaration: openai {"type":"function","function":{name,description,parameters}},
/// anthropic {name,description,input_schema}, gemini and json-schema
/// {name,description,parameters}, mcp {name,description,inputSchema} (the flat form:
/// MCP clients pass it on to their own providers).
Json tool_declaration(const ToolConfig& t, dialect d);
/// What parameter `p` of `t` says of itself, as `t`'s config has it: the built-in
/// shell's `cwd` is confined to the workspace unless cwd_outside_workspace lets it out.
std::string parameter_description(const ToolConfig& t, const ParameterConfig& p);
/// Whether parameter `p` of `t` is offered to the model (declared and described).
bool offered(const ToolConfig& t, const ParameterConfig& p);
/// Whether `t` is offered to the model: not when its run is "skip" (refused at every
/// call) unless a stateful tool's spawn is let through.
bool tool_offered(const ToolConfig& t);
/// The tools offered to the model, sorted by name: not one whose run is "skip" (refused
/// at every call), and `await` only when a stateful tool is offered.
std::vector<const ToolConfig*> offered_tools(const Config& c);
/// Every tool offered (offered_tools), declared.
Json tool_declarations(const Config& c, dialect d);

} // namespace jp
