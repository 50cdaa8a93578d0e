// The assistant answering structured questions (RFD 026's InquiryBackend with an
// LLM): the turn-end inquiry (wait or abort, per handle) and tools' questions whose
// target is the assistant. One request each, asking for a JSON answer, checked
// against what the question allows. `model` may name a cheaper model than the
// conversation's ([assistant] inquiry_model).
#pragma once

#include <memory>
#include <string>

#include "inquiry_backend.hpp"
#include "provider.hpp"

namespace jp {

std::shared_ptr<InquiryBackend> make_llm_inquiry(std::shared_ptr<Provider> provider, std::string model);

/// The JSON schema of an answer to the turn-end inquiry: {inquiry_id: "turn_end",
/// answer: {<id>: "wait" | "abort"}} with every outstanding handle required.
Json turn_end_answer_schema(const std::vector<HandleSummary>& outstanding);

/// The JSON object in an LLM's answer (it may wrap it in prose or a code fence).
Result<Json> json_in_answer(const std::string& text);

} // namespace jp
