// The errors both provider stream decoders report, worded once so a user sees the
// same message whichever dialect the provider speaks.
#pragma once

#include <string_view>

#include "../../messages/result.hpp"

namespace jp {

/// "provider error: <message>": the provider reported a failure inside the stream
/// (after the HTTP status was already 200).
Error provider_stream_error(std::string_view message);

/// "malformed stream from the provider: <what> in event: <data>", the data cut to
/// its first 200 bytes (at a UTF-8 boundary).
Error malformed_stream_error(std::string_view what, std::string_view data);

} // namespace jp
