#pragma once
// The one mapping from a relayed Reply to the response of the request it answers: a result
// or an error object passed through as the peer sent them (byte-exact), nothing for a
// cancelled request (its caller gave up), else an internal error saying the peer did not
// answer. Threading: the session's loop thread.
#include "mcp/session.hpp"

#include <string_view>

namespace sluice::mcp {

// `unanswered`: the error message when the peer gave no answer (timeout, closed, expired).
void answer(IncomingRequest& request, const Reply& reply, std::string_view unanswered);

}  // namespace sluice::mcp
