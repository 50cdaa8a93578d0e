#include "messages/error_category.hpp"

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/make_message.hpp>
#include <caf/message.hpp>

namespace jp {

namespace {

const caf::atom_value category = caf::atom("jp");

} // namespace

caf::error make_error(error_code code, std::string text) {
  return caf::error(static_cast<uint8_t>(code), category, caf::make_message(std::move(text)));
}

error_code code_of(const caf::error& err) {
  return err && err.category() == category ? static_cast<error_code>(err.code()) : error_code::none;
}

std::string error_text(const caf::error& err) {
  // No error (a down message of a normal exit): category() would read through null.
  if (!err)
    return "no error";
  // Ours, and CAF's runtime_error with a sentence: the sentence alone.
  if ((err.category() == category || err.category() == caf::atom("system")) && !err.context().empty()
      && err.context().match_element<std::string>(0))
    return err.context().get_as<std::string>(0);
  return caf::to_string(err);
}

void register_error_category(caf::actor_system_config& cfg) {
  cfg.add_error_category(category, [](uint8_t code, caf::atom_value, const caf::message& context) {
    std::string text = "jp: ";
    text += to_string(static_cast<error_code>(code));
    if (!context.empty() && context.match_element<std::string>(0))
      text += ": " + context.get_as<std::string>(0);
    return text;
  });
}

} // namespace jp
