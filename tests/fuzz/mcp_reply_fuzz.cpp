// libFuzzer target (-DJP_FUZZ=ON, clang): what an MCP server answers, which the
// client trusts no more than a model -- read as a tool's input schema (its
// parameters, each property's references written out) and as a tools/call result.
// Whatever the bytes, reading them must not crash or run away, every dialect's
// declaration of the tool must be JSON that reads back as itself, and a property's
// declared schema must refer to nothing (it is sent without the root it came in).
#include <cstdint>
#include <string_view>

#include "tests/program_assert.hpp"
#include "config/config.hpp"
#include "messages/json.hpp"
#include "runtime/mcp/mcp_call_result.hpp"
#include "runtime/mcp/mcp_input_schema.hpp"
#include "tools/schema.hpp"

namespace {

/// Whether `schema` has a `$ref` where a schema is (not in a value: an enum's, a
/// default's), looking where mcp_parameters writes references out.
bool refers(const jp::Json& schema, bool data = false) {
  if (schema.is_array()) {
    for (auto& x : schema.as_array())
      if (refers(x, data))
        return true;
    return false;
  }
  if (!schema.is_object())
    return false;
  for (auto& [key, value] : schema.as_object()) {
    if (!data && key == "$ref")
      return true;
    bool value_data = data || key == "const" || key == "enum" || key == "default" || key == "examples";
    bool by_name = !data && (key == "properties" || key == "patternProperties" || key == "dependentSchemas");
    if (by_name && value.is_object()) {
      for (auto& [name, sub] : value.as_object())
        if (refers(sub))
          return true;
    } else if (refers(value, value_data)) {
      return true;
    }
  }
  return false;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto reply = jp::Json::parse(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!reply.ok())
    return 0;
  auto state = jp::mcp_call_state(*reply);
  PROGRAM_ASSERT(state.stopped());
  PROGRAM_ASSERT(state.ok || !state.error.message.empty());

  jp::ToolConfig tool;
  tool.name = "demo__t";
  tool.summary = "fuzzed";
  tool.source = "mcp.demo";
  tool.parameters = jp::mcp_parameters(*reply);
  for (auto& p : tool.parameters) {
    PROGRAM_ASSERT(!p.type.empty());
    PROGRAM_ASSERT(p.declared_schema.is_null() || (p.declared_schema.is_object() && !refers(p.declared_schema)));
  }
  for (auto stateful : {false, true}) {
    tool.stateful = stateful;
    for (auto d : {jp::dialect::openai, jp::dialect::anthropic, jp::dialect::gemini, jp::dialect::json_schema,
                   jp::dialect::mcp}) {
      auto declaration = jp::tool_declaration(tool, d);
      auto again = jp::Json::parse(declaration.dump());
      PROGRAM_ASSERT(again.ok());
      PROGRAM_ASSERT(*again == declaration);
    }
  }
  return 0;
}
