// jp-actors' public C++ API (docs/embedding.md):
//   jp::Runtime   a configuration, function tools, an actor system    <jp/runtime.hpp>
//   jp::Session   handles driven by the program: spawn, fetch, apply,
//                 abort, await, list                                    <jp/session.hpp>
//   jp::Turn      one turn of the agent loop with its hooks            <jp/turn.hpp>
//   function tools: FunctionTool, Invocation, FunctionResult         <jp/tools/function_tool.hpp>
// Plain data it answers with: CallResult, HandleSummary, TurnResult, ToolState,
// error_code (messages/). Executors of your own: <jp/executor.hpp> (brings CAF in).
#pragma once

#include "messages/call_result.hpp"
#include "messages/error_code.hpp"
#include "messages/handle_summary.hpp"
#include "messages/json.hpp"
#include "messages/tool_state.hpp"
#include "messages/turn_result.hpp"
#include "runtime.hpp"
#include "session.hpp"
#include "tools/function_tool.hpp"
#include "turn.hpp"
