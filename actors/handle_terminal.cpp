#include "actors/handle_terminal.hpp"

#include <fmt/format.h>
#include <vector>


namespace jp {

HandleTerminal::HandleTerminal(int rows, int cols) : text_(cols), screen_(rows, cols) {
}

HandleTerminal::Fed HandleTerminal::feed(std::string_view chunk) {
  screen_.feed(chunk);
  // A program asking the terminal (cursor position, ...) waits for the answer.
  auto replies = screen_.take_replies();
  return {text_.feed(chunk), std::move(replies)};
}

Result<std::string> HandleTerminal::typed_bytes(const Json& input) {
  // Text goes as written: a JSON string shows every byte already (\u001b is Esc), and
  // a backslash is code's (`printf 'a\n'`, a regex), which escapes of our own would
  // have turned into an Enter or a backspace. Except the keys form as JSON text, which
  // a client that checks `input` against a schema of type string can only send so.
  if (input.is_string()) {
    auto& text = input.as_string();
    if (text.starts_with("{\"keys\"") || text.starts_with("{\"text\""))
      if (auto keys = Json::parse(text); keys && keys->is_object() && keys->find("keys"))
        return typed_bytes(*keys);
    return text;
  }
  if (input.is_object()) {
    std::string bytes;
    auto* text = input.find("text");
    auto* keys = input.find("keys");
    bool only_known = input.as_object().size() == (text ? 1u : 0u) + (keys ? 1u : 0u);
    if (only_known && (text || keys)) {
      if (text && !text->is_string())
        return Error{"`input.text` must be a string"};
      if (text)
        bytes = text->as_string();
      if (keys) {
        std::vector<std::string> names;
        if (keys->is_array())
          for (auto& k : keys->as_array())
            if (k.is_string())
              names.push_back(k.as_string());
        if (!keys->is_array() || names.size() != keys->as_array().size())
          return Error{"`input.keys` must be an array of key names, e.g. [\"Up\", \"Enter\", \"C-c\"]"};
        auto encoded = screen_.encode_keys(names);
        if (!encoded)
          return Error{encoded.error()};
        bytes += *encoded;
      }
      return bytes;
    }
  }
  return Error{fmt::format("a terminal takes `input` as text (typed as written: \"\\n\" is Enter, "
                           "\"\\u0003\" Ctrl-C) or as {{\"keys\": [\"Up\", \"Enter\", \"C-c\"]}} (optionally "
                           "with \"text\" typed first), got {}",
                           input.described())};
}

} // namespace jp
