// The assistant a config asks for ([assistant]): the provider that answers, the
// schema dialect it is sent, and who answers the turn-end inquiry and the tools'
// questions to the assistant. The CLI's `query` and the embedding API build it here.
#pragma once

#include <memory>

#include "../../config/config.hpp"
#include "../../messages/error_code.hpp"
#include "../../messages/result.hpp"
#include "inquiry_backend.hpp"
#include "provider.hpp"
#include "../../tools/schema.hpp"

namespace jp {

struct Script;

struct Assistant {
  std::shared_ptr<Provider> provider;
  std::shared_ptr<InquiryBackend> inquiry;
  dialect tool_dialect = dialect::openai;
  // provider = "scripted": the script, whose [[subagents]] play the sub-agents (the
  // provider's steps are its first agent's alone).
  std::shared_ptr<const Script> script;
};

/// The schema dialect `a`'s provider is sent: anthropic's, gemini's for Google's
/// OpenAI-compatible endpoint (generativelanguage.googleapis.com, which refuses an
/// object schema without properties), else openai's.
dialect tool_dialect_for(const AssistantConfig& a);

/// provider = "scripted": the first agent of assistant.script (relative to the
/// workspace); openai | anthropic: over HTTP with the key from its variable.
/// Errors say which key to set; `kind`, where given, is told what failed
/// (provider_auth: the key's variable is unset; bad_arguments: anything else).
Result<Assistant> make_assistant(const Config& config, error_code* kind = nullptr);

} // namespace jp
