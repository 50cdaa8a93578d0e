// toml++ descends its stack once per part of a dotted key (`[a.b.c]`, `a.b.c = 1`)
// and per nested table or array: a workspace's config of 50,000 parts (100 KB)
// overflowed it and crashed every command run there. This counts, before parsing,
// how deep the text's keys and values nest, outside strings and comments.
#pragma once

#include <cstddef>
#include <string_view>

#include "../messages/result.hpp"

namespace jp {

/// Far deeper than a config or script a person writes, far from what overflows.
constexpr size_t kMaxTomlDepth = 512;

/// Refused, naming the line, when a key or value nests deeper than `max_depth`: the
/// parts of its table's header and of its dotted key, and the arrays and inline tables
/// around it, counted together.
Status check_toml_depth(std::string_view text, std::string_view origin, size_t max_depth = kMaxTomlDepth);

} // namespace jp
