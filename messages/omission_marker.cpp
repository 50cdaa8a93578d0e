#include "messages/omission_marker.hpp"

#include <fmt/format.h>

namespace jp {

namespace {
constexpr std::string_view open = "…[", said = " bytes omitted", close = "]…";
} // namespace

std::string omission_marker(uint64_t n) {
  return fmt::format("\n{}{}{}{}\n", open, n, said, close);
}

size_t find_omission_marker(std::string_view text, size_t from) {
  return text.find(open, from);
}

std::optional<OmissionMarkerAt> omission_marker_at(std::string_view text, size_t at) {
  if (at == 0 || text.substr(at, open.size()) != open || text[at - 1] != '\n')
    return std::nullopt;
  auto i = at + open.size();
  uint64_t bytes = 0;
  size_t digits = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9' && digits < 16; ++i, ++digits)
    bytes = bytes * 10 + static_cast<uint64_t>(text[i] - '0');
  auto end = i + said.size();
  if (digits == 0 || digits > 15 || text.substr(i, said.size()) != said || text.substr(end, close.size()) != close)
    return std::nullopt;
  end += close.size();
  // The closing line break is the marker's too, when the text goes on past it.
  auto to = end < text.size() && text[end] == '\n' ? end + 1 : end;
  return OmissionMarkerAt{at - 1, to, bytes};
}

} // namespace jp
