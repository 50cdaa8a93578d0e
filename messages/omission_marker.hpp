// The text that stands for bytes left out of a tool's output ("\n…[N bytes omitted]…\n"),
// and its reading: the output cap writes it, the response cap counts what it stands for.
// One place for the form, so the writer and the reader cannot drift apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace jp {

/// What stands for `n` bytes left out between a head and a tail.
std::string omission_marker(uint64_t n);

/// A marker found in a text: it spans [from, to) (its line breaks included) and
/// stands for `bytes`.
struct OmissionMarkerAt {
  size_t from = 0;
  size_t to = 0;
  uint64_t bytes = 0;
};

/// The output cap's marker whose "…[" starts at `at` in `text`, if the text there is
/// its exact form (a line break before it, a plausible N); a text that merely quotes
/// a marker elsewhere in a line is text.
std::optional<OmissionMarkerAt> omission_marker_at(std::string_view text, size_t at);

/// Where the next candidate marker starts at or after `from` (npos: none).
size_t find_omission_marker(std::string_view text, size_t from);

} // namespace jp
