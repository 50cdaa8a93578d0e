#include "actors/pipe_input.hpp"

#include "messages/json.hpp"

namespace jp {

std::string pipe_input(const std::string& input_json) {
  auto input = Json::parse(input_json);
  if (input.ok() && input->is_string())
    return input->as_string();
  return (input.ok() ? input->dump() : input_json) + "\n";
}

} // namespace jp
