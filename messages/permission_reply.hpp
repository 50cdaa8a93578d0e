// A person's answer to "may this tool run?": asked on a detached actor, it crosses
// to the turn as this message.
#pragma once

#include <cstdint>
#include <string>

namespace jp {

// unasked: the question could not be put (the reason says why): no answer, and no
// refusal of the user's either.
enum class permission_answer : uint8_t { yes, yes_for_turn, no, no_with_reason, unasked };

inline const char* to_string(permission_answer a) {
  switch (a) {
    case permission_answer::yes: return "yes";
    case permission_answer::yes_for_turn: return "yes_for_turn";
    case permission_answer::no: return "no";
    case permission_answer::no_with_reason: return "no_with_reason";
    case permission_answer::unasked: return "unasked";
  }
  return "no";
}

struct PermissionReply {
  permission_answer answer = permission_answer::no;
  std::string reason; // no_with_reason: what the assistant is told; unasked: why not
  friend bool operator==(const PermissionReply&, const PermissionReply&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, PermissionReply& x) {
  return f(x.answer, x.reason);
}

} // namespace jp
