// An MCP tool's input schema, as its server declares it, read as a tool config's
// parameters (DESIGN.md "MCP"). The server is not trusted to declare a sensible
// schema: whatever it sends ends as parameters or as none, never as a crash, and a
// property's own schema is passed on only when it stands alone.
#pragma once

#include <vector>

#include "../../config/config.hpp"
#include "../../messages/json.hpp"

namespace jp {

/// A tool's parameters from its MCP input schema (a JSON Schema object); what
/// jp-actors checks (type, enum, items, default; a property of a union of types or
/// of none is the server's to check) is read from each property, and the property's
/// schema is kept whole (`declared_schema`) for the dialects that take any JSON
/// Schema. An array anywhere in it without `items` gets `"items": {}` (OpenAI
/// refuses an array schema without items, at any depth). A property's local references (`$ref` "#/$defs/Item", as pydantic
/// and zod write nested types) are written out in place, since the property's schema
/// is sent without the root they point into; a property whose references cannot be
/// (another document, a cycle, a tool's properties growing past a bound together) is
/// declared as any value ({}) for the server to check, and gemini is told its type.
/// A property whose name a service refuses (`filter[id]`, `$top`) is offered by one
/// it takes, and keeps the server's in declared_name.
std::vector<ParameterConfig> mcp_parameters(const Json& input_schema);

/// What the schema's root takes besides its properties: its additionalProperties
/// (true or a schema) and patternProperties, as declared; null when it says neither
/// (a key it does not name is then refused, as a typo).
Json mcp_extra_keys(const Json& input_schema);

} // namespace jp
