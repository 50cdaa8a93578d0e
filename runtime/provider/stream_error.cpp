#include "runtime/provider/stream_error.hpp"

#include <string>

namespace jp {

Error provider_stream_error(std::string_view message) {
  return Error{"provider error: " + std::string(message)};
}

Error malformed_stream_error(std::string_view what, std::string_view data) {
  size_t n = data.size() <= 200 ? data.size() : 200;
  // Back off to a character boundary: the message may end up in JSON.
  while (n < data.size() && n > 0 && (static_cast<unsigned char>(data[n]) & 0xC0) == 0x80)
    --n;
  return Error{"malformed stream from the provider: " + std::string(what) +
               " in event: " + std::string(data.substr(0, n))};
}

} // namespace jp
