#include "runtime/store/own_conversations.hpp"

#include <fmt/format.h>

#include "runtime/store/user_record.hpp"

namespace jp {

namespace {

constexpr std::string_view kRecord = "own-conversations";

} // namespace

bool own_conversation(const std::string& root, const std::string& id) {
  return in_user_record(kRecord, root + "\t" + id);
}

Status remember_own_conversation(const std::string& root, const std::string& id) {
  if (auto s = add_to_user_record(kRecord, root + "\t" + id); !s)
    return Status::fail(fmt::format("cannot record conversation {} as yours: {}", id, s.error));
  return Status::ok();
}

} // namespace jp
