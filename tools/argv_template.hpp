// Argument templating for local command tools: {{tool.arguments.NAME}} and
// {{tool.answers.ID}} inside argv elements, cwd and env values. Values are substituted
// into argv elements -- never into shell text, even with shell = true.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "../config/config.hpp"
#include "../messages/json.hpp"
#include "../messages/result.hpp"

namespace jp {

struct TemplateContext {
  const Json& arguments; // object
  const Json& answers;   // object (question id -> answer)
};

/// Expands one template. Strings are inserted as-is, other JSON values as compact
/// JSON. A reference to a missing value expands to "" -- but see expand_argv. A value
/// holding a NUL byte is an error naming the placeholder (it would cut the string).
/// A "{{" not opening with `tool.` is literal text (config/placeholder.hpp); under
/// `tool.`, unknown roots (anything but tool.arguments / tool.answers) and an
/// unterminated "{{" are errors naming the template.
Result<std::string> expand_template(std::string_view tmpl, const TemplateContext& ctx);

/// Expands program + args. An element that is exactly one {{...}} whose value is
/// missing (or null) is dropped, so optional parameters vanish instead of becoming "".
/// With tool.shell, the result is {"bash", "-c", SCRIPT, tool.name, values...}: SCRIPT
/// is program + " " + args with each placeholder replaced by a positional parameter
/// ("${N}", or ${N} inside double quotes; see config/shell_template.hpp), so the author's
/// template is shell and the assistant's values never are.
Result<std::vector<std::string>> expand_argv(const ToolConfig& tool, const TemplateContext& ctx);

} // namespace jp
