// The system prompt tells the model how to use stateful tools, only when some are
// offered: the function, and what `query` sends the provider.
#define CAF_SUITE protocol_guidance
#include <caf/test/unit_test.hpp>

#include <cstdlib>
#include <fmt/format.h>

#include "cli_run.hpp"
#include "config/config_loader.hpp"
#include "fake_provider_server.hpp"
#include "messages/json.hpp"
#include "tools/builtin_tools.hpp"
#include "temp_dir.hpp"
#include "tools/protocol_guidance.hpp"
#include "contains.hpp"

using namespace jp;
using namespace jp::testing;

namespace {

/// The `system` field of the one request `query` sends an Anthropic-style provider.
std::string system_sent(const std::string& extra_config) {
  struct Key { // the fake wants one, as the service does
    Key() { ::setenv("JP_QUERY_TEST_KEY", "sk-ant-test", 1); }
    ~Key() { ::unsetenv("JP_QUERY_TEST_KEY"); }
  } key;
  FakeProviderServer server;
  temp_dir dir;
  dir.write("config.toml", fmt::format("[assistant]\nprovider = \"anthropic\"\nmodel = \"test-model\"\n"
                                       "base_url = \"{}\"\napi_key_env = \"JP_QUERY_TEST_KEY\"\n{}",
                                       server.base_url(), extra_config));
  server.push({200, provider_fixture("anthropic_text.sse")});
  auto r = cli_in(dir.path.string(), fmt::format("--config {}/config.toml query hi", dir.path.string()));
  JP_REQUIRE_OK(r);
  auto seen = server.requests();
  CAF_REQUIRE_EQUAL(seen.size(), 1u);
  auto body = Json::parse(seen[0].body);
  CAF_REQUIRE(body.ok());
  // One text block, the cache's first breakpoint.
  auto* system = body->find("system");
  CAF_REQUIRE(system && system->is_array() && system->as_array().size() == 1u);
  auto& block = system->as_array()[0];
  CAF_CHECK_EQUAL(block.find("cache_control")->dump(), R"({"type":"ephemeral"})");
  return block.find("text")->as_string();
}

} // namespace

CAF_TEST(guidance covers spawn await fetch and abort and follows the users prompt) {
  auto config = default_config();
  auto guidance = protocol_guidance(config);
  for (auto word : {"spawn", "await", "same batch", "fetch", "abort"})
    CAF_CHECK(contains(guidance, word));
  CAF_CHECK_EQUAL(system_prompt_with_guidance(config), guidance);
  config.assistant.system_prompt = "Be brief.";
  CAF_CHECK_EQUAL(system_prompt_with_guidance(config), "Be brief.\n\n" + guidance);
  for (auto& [name, tool] : config.tools)
    tool.stateful = false;
  CAF_CHECK_EQUAL(protocol_guidance(config), "");
  CAF_CHECK_EQUAL(system_prompt_with_guidance(config), "Be brief.");
}

CAF_TEST(query sends the guidance only when a stateful tool is offered) {
  auto with = system_sent("system_prompt = \"Be brief.\"\n");
  CAF_CHECK(contains(with, "Be brief.\n\n"));
  CAF_CHECK(contains(with, "\"action\":\"spawn\""));
  auto without = system_sent("system_prompt = \"Be brief.\"\n"
                             "[conversation.tools.shell.spawn]\nstateful = false\n"
                             "[conversation.tools.agent.spawn]\nstateful = false\n"
                             "[conversation.tools.foreach.spawn]\nstateful = false\n");
  CAF_CHECK_EQUAL(without, "Be brief.");
}
