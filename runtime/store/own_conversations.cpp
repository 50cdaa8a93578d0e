#include "runtime/store/own_conversations.hpp"

#include <filesystem>
#include <fmt/format.h>

#include "runtime/store/user_record.hpp"

namespace jp {

namespace {

constexpr std::string_view kRecord = "own-conversations";

/// The record's line: the store by its real path (one reached through a link, or
/// by another spelling, is the same store).
std::string line_of(const std::string& root, const std::string& id) {
  std::error_code ec;
  auto real = std::filesystem::weakly_canonical(root, ec);
  return (ec ? root : real.string()) + "\t" + id;
}

} // namespace

bool own_conversation(const std::string& root, const std::string& id) {
  return in_user_record(kRecord, line_of(root, id));
}

Status remember_own_conversation(const std::string& root, const std::string& id) {
  if (auto s = add_to_user_record(kRecord, line_of(root, id)); !s)
    return Status::fail(fmt::format("cannot record conversation {} as yours: {}", id, s.error));
  return Status::success();
}

} // namespace jp
