// Argument templating for local command tools: {{tool.arguments.NAME}} and
// {{tool.answers.ID}} inside argv elements, cwd and env values. Values are substituted
// into one argv element each -- never concatenated into a shell string.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "messages/json.hpp"
#include "messages/result.hpp"

namespace jp {

struct TemplateContext {
  const Json& arguments; // object
  const Json& answers;   // object (question id -> answer)
};

/// Expands one template. Strings are inserted as-is, other JSON values as compact
/// JSON. A reference to a missing value expands to "" -- but see expand_argv.
/// Unknown roots (anything but tool.arguments / tool.answers) or unterminated
/// "{{" are errors naming the template.
Result<std::string> expand_template(std::string_view tmpl, const TemplateContext& ctx);

/// Expands program + args. An element that is exactly one {{...}} whose value is
/// missing (or null) is dropped, so optional parameters vanish instead of becoming "".
/// With tool.shell, the result is {"bash","-c", program + " " + args joined by spaces}
/// (each substituted value single-quoted as one shell word: the author's template
/// is shell, the assistant's values never are).
Result<std::vector<std::string>> expand_argv(const ToolConfig& tool, const TemplateContext& ctx);

} // namespace jp
