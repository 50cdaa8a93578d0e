// Whether a variable's value holds a secret, whatever the variable is called: a
// tool inherits the environment, and a model could have it print any variable.
#pragma once

#include <string_view>

namespace jp {

/// Whether `value` carries credentials: in a URL (postgres://user:password@host,
/// https://token@host), as a connection string's or a URL query's secret-looking
/// parameter (Server=db;Password=x, https://host/v1?api_key=x, ...&sig=x), as an
/// Authorization header or a bearer token (git's http.extraheader), or as a
/// well-known service's webhook URL (hooks.slack.com/services/..., whose path is
/// the secret).
bool secret_looking_value(std::string_view value);

} // namespace jp
