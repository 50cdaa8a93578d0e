// The {{...}} placeholders of a local tool's command, cwd and env: found here once for
// the loader's checks, the shell scan and the expansion, so the three never disagree
// about where one starts or ends.
//
// A placeholder is a "{{" whose text, blanks aside, starts with `tool.`
// ({{tool.arguments.NAME}}, {{ tool.answers.ID }}). Any other "{{" is literal text, so
// a program's own templates pass through: docker ps --format '{{.Names}}'.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "../messages/result.hpp"

namespace jp {

struct Placeholder {
  size_t offset = 0;           // where its "{{" starts in the text
  size_t length = 0;           // from "{{" through "}}"
  std::string_view expression; // what is between them, without the blanks around it
};

/// The placeholders of `text`, in order. A placeholder's "{{" with no "}}" after it is
/// the error "unterminated `{{` in template `TEXT`".
Result<std::vector<Placeholder>> find_placeholders(std::string_view text);

/// The text after the first literal "{{" of `text` that looks like a mistyped
/// placeholder (`{{arguments.dir}}`, `{{args.x}}`, `{{Tool.arguments.x}}`, "{{" and a
/// line break before `tool.`, or one of `declared`, a parameter's bare name:
/// `{{ dir }}`), up to its "}}"; empty when none does. Literal, it would be passed as
/// it is, where a placeholder's value was meant.
std::string_view mistyped_placeholder(std::string_view text, const std::vector<std::string>& declared = {});

/// `s` without the blanks (spaces, tabs) around it.
std::string_view trim_blanks(std::string_view s);

} // namespace jp
