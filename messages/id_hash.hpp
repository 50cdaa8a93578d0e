// A hash for handle ids in the await path's tables. An await of the rest names
// ≈ 170 ids and each is looked up a few times per stop; std::hash<std::string>
// (libstdc++'s out-of-line _Hash_bytes) was ≈ 23k instructions of W3's 112k-
// instruction cycle. Ids are short (a name and a number): two 8-byte loads and one
// multiply cover them, inline. Not for secrets or as a fingerprint: a model that
// picks colliding ids only slows its own turn's lookups, as with std::hash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace jp {

namespace id_hash_detail {

inline uint64_t load8(const char* p) noexcept {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

inline uint64_t load4(const char* p) noexcept {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

/// Both halves of a 64×64-bit product folded: every input bit reaches the result.
inline uint64_t fold_mul(uint64_t a, uint64_t b) noexcept {
  auto m = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(m) ^ static_cast<uint64_t>(m >> 64);
}

constexpr uint64_t k0 = 0x9E3779B97F4A7C15ull; // 2^64 / golden ratio
constexpr uint64_t k1 = 0xD6E8FEB86659FD93ull; // odd, bits spread

} // namespace id_hash_detail

inline size_t id_hash(std::string_view s) noexcept {
  using namespace id_hash_detail;
  const char* p = s.data();
  size_t n = s.size();
  uint64_t h = k0 ^ (n * k1);
  for (; n > 16; p += 16, n -= 16)
    h = fold_mul(load8(p) ^ k0 ^ h, load8(p + 8) ^ k1);
  uint64_t a = 0, b = 0;
  if (n >= 8) { // two loads that overlap when n < 16
    a = load8(p);
    b = load8(p + n - 8);
  } else if (n >= 4) {
    a = load4(p);
    b = load4(p + n - 4);
  } else if (n > 0) {
    a = static_cast<uint64_t>(static_cast<unsigned char>(p[0])) << 16 |
        static_cast<uint64_t>(static_cast<unsigned char>(p[n / 2])) << 8 | static_cast<unsigned char>(p[n - 1]);
  }
  return fold_mul(a ^ k1 ^ h, b ^ k0 ^ s.size());
}

/// For unordered containers keyed by id: looks up by std::string or string_view
/// alike (with std::equal_to<>), no string made to look one up.
struct IdHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return id_hash(s); }
  size_t operator()(const std::string& s) const noexcept { return id_hash(s); }
};

} // namespace jp
