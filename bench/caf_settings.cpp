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

struct Key {
  const char* name;
  bool duration; // else a count
};

constexpr Key kKeys[] = {
  {"work-stealing.aggressive-poll-attempts", false}, {"work-stealing.aggressive-steal-interval", false},
  {"work-stealing.moderate-poll-attempts", false},   {"work-stealing.moderate-steal-interval", false},
  {"work-stealing.moderate-sleep-duration", true},   {"work-stealing.relaxed-steal-interval", false},
  {"work-stealing.relaxed-sleep-duration", true},
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

} // namespace

Result<std::pair<std::string, std::string>> parse_caf_setting(const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos)
    return Error{"--caf '" + text + "': expected KEY=VALUE, KEY one of " + key_names()};
  std::string key = text.substr(0, eq), value = text.substr(eq + 1);
  const Key* k = find_key(key);
  if (k == nullptr)
    return Error{"--caf: unknown key '" + key + "'; allowed: " + key_names()};
  bool valid = k->duration ? duration_of(value).has_value() : count_of(value).has_value();
  if (!valid)
    return Error{"--caf " + key + ": '" + value + "' is not " +
                 (k->duration ? "a duration (a whole number with ns, us or ms: 50us)" : "a whole number")};
  return std::pair{key, value};
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
    auto setting = parse_caf_setting(one);
    if (!setting)
      throw std::runtime_error(setting.error());
    auto& [key, value] = *setting;
    if (find_key(key)->duration)
      cfg.set(key, *duration_of(value));
    else
      cfg.set(key, *count_of(value));
  }
  return cfg;
}

std::string work_stealing_settings(const caf::actor_system_config& cfg) {
  auto count = [&](const char* key, size_t fallback) {
    return std::string(key) + "=" + std::to_string(caf::get_or(cfg, key, fallback)) + "\n";
  };
  auto duration = [&](const char* key, caf::timespan fallback) {
    auto ns = caf::get_or(cfg, key, fallback).count();
    return std::string(key) + "=" + std::to_string(ns / 1000) + "us\n";
  };
  return count(kKeys[0].name, ws::aggressive_poll_attempts) + count(kKeys[1].name, ws::aggressive_steal_interval) +
         count(kKeys[2].name, ws::moderate_poll_attempts) + count(kKeys[3].name, ws::moderate_steal_interval) +
         duration(kKeys[4].name, ws::moderate_sleep_duration) + count(kKeys[5].name, ws::relaxed_steal_interval) +
         duration(kKeys[6].name, ws::relaxed_sleep_duration);
}

} // namespace jp::bench
