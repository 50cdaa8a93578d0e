#include "bench/caf_settings.hpp"

#include <caf/actor_system_config.hpp>
#include <caf/defaults.hpp>
#include <charconv>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string_view>

namespace jp::bench {

namespace {

namespace ws = caf::defaults::work_stealing;

/// A setting and CAF's default for it: a count, or a duration (`duration` set).
struct Key {
  const char* name;
  const size_t* count;
  const caf::timespan* duration;
};

constexpr Key kKeys[] = {
  {"work-stealing.aggressive-poll-attempts", &ws::aggressive_poll_attempts, nullptr},
  {"work-stealing.aggressive-steal-interval", &ws::aggressive_steal_interval, nullptr},
  {"work-stealing.moderate-poll-attempts", &ws::moderate_poll_attempts, nullptr},
  {"work-stealing.moderate-steal-interval", &ws::moderate_steal_interval, nullptr},
  {"work-stealing.moderate-sleep-duration", nullptr, &ws::moderate_sleep_duration},
  {"work-stealing.relaxed-steal-interval", &ws::relaxed_steal_interval, nullptr},
  {"work-stealing.relaxed-sleep-duration", nullptr, &ws::relaxed_sleep_duration},
};

std::string key_names() {
  std::string names;
  for (const auto& k : kKeys)
    names += std::string(names.empty() ? "" : ", ") + k.name;
  return names;
}

const Key* find_key(const std::string& name) {
  for (const auto& k : kKeys)
    if (name == k.name)
      return &k;
  return nullptr;
}

std::optional<size_t> count_of(std::string_view text) {
  size_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty())
    return std::nullopt;
  return n;
}

std::optional<caf::timespan> duration_of(std::string_view text) {
  struct Unit {
    std::string_view suffix;
    int64_t ns;
  };
  for (auto u : {Unit{"ns", 1}, Unit{"us", 1000}, Unit{"ms", 1000000}}) {
    if (text.size() > u.suffix.size() && text.ends_with(u.suffix)) {
      auto n = count_of(text.substr(0, text.size() - u.suffix.size()));
      if (n)
        return caf::timespan{static_cast<int64_t>(*n) * u.ns};
    }
  }
  return std::nullopt;
}

struct Parsed {
  const Key* key;
  size_t count = 0;
  caf::timespan duration{};
};

Result<Parsed> parse(const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos)
    return Error{"--caf '" + text + "': expected KEY=VALUE, KEY one of " + key_names()};
  std::string key = text.substr(0, eq), value = text.substr(eq + 1);
  const Key* k = find_key(key);
  if (k == nullptr)
    return Error{"--caf: unknown key '" + key + "'; allowed: " + key_names()};
  if (k->duration) {
    if (auto d = duration_of(value))
      return Parsed{k, 0, *d};
    return Error{"--caf " + key + ": '" + value + "' is not a duration (a whole number with ns, us or ms: 50us)"};
  }
  if (auto n = count_of(value))
    return Parsed{k, *n, {}};
  return Error{"--caf " + key + ": '" + value + "' is not a whole number"};
}

} // namespace

Status check_caf_setting(const std::string& text) {
  auto parsed = parse(text);
  return parsed ? Status::success() : Status(Error{parsed.error()});
}

caf::actor_system_config& with_bench_caf_settings(caf::actor_system_config& cfg) {
  const char* all = std::getenv(kCafSettingsVariable);
  std::string_view rest = all ? all : "";
  while (!rest.empty()) {
    auto semi = rest.find(';');
    std::string one(rest.substr(0, semi));
    rest = semi == std::string_view::npos ? std::string_view{} : rest.substr(semi + 1);
    if (one.empty())
      continue;
    auto setting = parse(one);
    if (!setting)
      throw std::runtime_error(setting.error());
    if (setting->key->duration)
      cfg.set(setting->key->name, setting->duration);
    else
      cfg.set(setting->key->name, setting->count);
  }
  return cfg;
}

std::string work_stealing_settings(const caf::actor_system_config& cfg) {
  std::string lines;
  for (const auto& k : kKeys) {
    lines += std::string(k.name) + "=";
    if (k.duration)
      lines += std::to_string(caf::get_or(cfg, k.name, *k.duration).count() / 1000) + "us\n";
    else
      lines += std::to_string(caf::get_or(cfg, k.name, *k.count)) + "\n";
  }
  return lines;
}

} // namespace jp::bench
