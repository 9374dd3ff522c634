#pragma once
// The handlers the meta-tool table names (private to src/gateway/meta/): each reads its
// validated arguments and asks the part of the gateway that owns the work.
#include "gateway/meta/meta_tools.hpp"

namespace sluice::gateway::meta {

asio::awaitable<std::optional<std::string>> catalog_search(MetaCall& call);
asio::awaitable<std::optional<std::string>> describe(MetaCall& call);
asio::awaitable<std::optional<std::string>> invoke(MetaCall& call);
asio::awaitable<std::optional<std::string>> health(MetaCall& call);
asio::awaitable<std::optional<std::string>> list_pending(MetaCall& call);
asio::awaitable<std::optional<std::string>> cancel(MetaCall& call);
asio::awaitable<std::optional<std::string>> restart_server(MetaCall& call);
asio::awaitable<std::optional<std::string>> disconnect_server(MetaCall& call);
asio::awaitable<std::optional<std::string>> refresh(MetaCall& call);
asio::awaitable<std::optional<std::string>> connect_server(MetaCall& call);

}  // namespace sluice::gateway::meta
