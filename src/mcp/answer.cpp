#include "mcp/answer.hpp"

namespace sluice::mcp {

void answer(IncomingRequest& request, const Reply& reply, std::string_view unanswered) {
  switch (reply.status) {
    case Reply::Status::result:
      request.respond_result(reply.message->result());
      return;
    case Reply::Status::error:
      request.respond_error_raw(reply.message->error());
      return;
    case Reply::Status::cancelled:
      return;
    default:
      request.respond_error(rpc::code::kInternalError, unanswered);
      return;
  }
}

}  // namespace sluice::mcp
