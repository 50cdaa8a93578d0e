#include "messages/type_registration.hpp"

#include <caf/actor_system_config.hpp>
#include <map>
#include <string>

#include "messages/call_result.hpp"
#include "messages/chat.hpp"
#include "messages/child_spec.hpp"
#include "messages/handle_summary.hpp"
#include "messages/launch_spec.hpp"
#include "messages/notification.hpp"
#include "messages/permission_reply.hpp"
#include "messages/tool_state.hpp"
#include "messages/turn_result.hpp"

namespace jp {

void register_message_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<ToolState>("jp.ToolState")
    .add_message_type<ToolError>("jp.ToolError")
    .add_message_type<ToolImage>("jp.ToolImage")
    .add_message_type<Question>("jp.Question")
    .add_message_type<AnswerType>("jp.AnswerType")
    .add_message_type<Outcome>("jp.Outcome")
    .add_message_type<ToolCommand>("jp.ToolCommand")
    .add_message_type<HandleReport>("jp.HandleReport")
    .add_message_type<LookOptions>("jp.LookOptions")
    .add_message_type<ToolCall>("jp.ToolCall")
    .add_message_type<ChatMessage>("jp.ChatMessage")
    .add_message_type<ChatRequest>("jp.ChatRequest")
    .add_message_type<ChatEvent>("jp.ChatEvent")
    .add_message_type<Screen>("jp.Screen")
    .add_message_type<AwaitRequest>("jp.AwaitRequest")
    .add_message_type<HandleStatus>("jp.HandleStatus")
    .add_message_type<std::vector<HandleStatus>>("jp.HandleStatusList")
    .add_message_type<AwaitResult>("jp.AwaitResult")
    .add_message_type<ChildSpec>("jp.ChildSpec")
    .add_message_type<LaunchSpec>("jp.LaunchSpec")
    .add_message_type<CallResult>("jp.CallResult")
    .add_message_type<Notification>("jp.Notification")
    .add_message_type<HandleCounts>("jp.HandleCounts")
    .add_message_type<std::map<std::string, std::string>>("jp.StringMap")
    .add_message_type<InquiryAnswers>("jp.InquiryAnswers")
    .add_message_type<std::vector<Notification>>("jp.NotificationList")
    .add_message_type<HandleProgress>("jp.HandleProgress")
    .add_message_type<HandleSummary>("jp.HandleSummary")
    .add_message_type<std::vector<HandleSummary>>("jp.HandleSummaryList")
    .add_message_type<PermissionReply>("jp.PermissionReply")
    .add_message_type<TurnResult>("jp.TurnResult");
}

} // namespace jp
