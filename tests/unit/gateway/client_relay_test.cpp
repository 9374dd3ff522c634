// ClientRelay: what a downstream sends reaches only the client session it belongs to; with
// no way to tell (several sessions), it reaches nobody. Subscriptions are per session.
#include "gateway/aggregate/client_relay.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sluice::gateway {
namespace {

class ClientRelayRecordingOutbox : public mcp::Outbox {
 public:
  void send(std::string frame) override { frames.push_back(std::move(frame)); }
  std::vector<std::string> frames;
};

// One client session whose frames are recorded.
struct Client {
  explicit Client(asio::io_context& io, std::string capabilities = "{}")
      : session(mcp::Session::create(io, mcp::SessionOptions{"client", {}, nullptr})) {
    session->attach(&outbox, nullptr);
    session->set_peer_capabilities(std::move(capabilities));
  }
  ~Client() { session->detach(); }
  bool received(std::string_view text) const {
    for (const auto& f : outbox.frames) {
      if (f.find(text) != std::string::npos) return true;
    }
    return false;
  }
  ClientRelayRecordingOutbox outbox;
  std::shared_ptr<mcp::Session> session;
};

class ClientRelayTest : public testing::Test {
 protected:
  // The reply to a downstream's request `method`, relayed now.
  mcp::Reply relay(std::string method) {
    std::optional<mcp::Reply> reply;
    asio::co_spawn(io_, relay_.relay_request("srv", std::move(method), "{}"),
                   [&](std::exception_ptr, mcp::Reply r) { reply = std::move(r); });
    io_.run_for(std::chrono::milliseconds(200));
    io_.restart();
    EXPECT_TRUE(reply.has_value());
    return reply ? std::move(*reply) : mcp::Reply{};
  }
  static std::string error_of(const mcp::Reply& reply) {
    return reply.message ? std::string(reply.message->error()) : std::string();
  }

  asio::io_context io_;
  CallLedger calls_{io_};
  config::GatewayPolicy policy_;
  core::Limits limits_;
  ClientRelay relay_{calls_, policy_, limits_};
};

TEST_F(ClientRelayTest, ARequestWithNoClientConnectedIsRefusedWithoutAValue) {
  mcp::Reply reply = relay("sampling/createMessage");
  EXPECT_EQ(reply.status, mcp::Reply::Status::error);
  EXPECT_NE(error_of(reply).find("no client is connected"), std::string::npos) << error_of(reply);
}

TEST_F(ClientRelayTest, ARequestNeedingACapabilityTheClientDidNotDeclareIsRefused) {
  Client client(io_, R"({"roots":{}})");
  relay_.add(client.session);
  mcp::Reply reply = relay("sampling/createMessage");
  EXPECT_EQ(reply.status, mcp::Reply::Status::error);
  EXPECT_NE(error_of(reply).find("did not declare the sampling capability"), std::string::npos);
  EXPECT_TRUE(client.outbox.frames.empty());
}

TEST_F(ClientRelayTest, ARequestGoesToTheOnlyClientThatDeclaredItsCapability) {
  Client client(io_, R"({"sampling":{}})");
  relay_.add(client.session);
  std::optional<mcp::Reply> reply;
  asio::co_spawn(io_, relay_.relay_request("srv", "sampling/createMessage", "{}"),
                 [&](std::exception_ptr, mcp::Reply r) { reply = std::move(r); });
  io_.run_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(client.received(R"("method":"sampling/createMessage")"));
  client.session->on_closed();  // ends the wait
  io_.run_for(std::chrono::milliseconds(200));
  EXPECT_TRUE(reply.has_value());
}

TEST_F(ClientRelayTest, WithSeveralClientsAndNoCallARequestReachesNobody) {
  Client a(io_, R"({"sampling":{}})");
  Client b(io_, R"({"sampling":{}})");
  relay_.add(a.session);
  relay_.add(b.session);
  mcp::Reply reply = relay("sampling/createMessage");
  EXPECT_NE(error_of(reply).find("several clients could have caused"), std::string::npos);
  relay_.relay_notification("srv", "notifications/message", R"({"level":"info"})");
  EXPECT_TRUE(a.outbox.frames.empty());
  EXPECT_TRUE(b.outbox.frames.empty());
}

TEST_F(ClientRelayTest, ARequestForwardedToTheServerMakesItsClientTheOne) {
  Client a(io_);
  Client b(io_);
  relay_.add(a.session);
  relay_.add(b.session);
  {
    // b's prompts/get is with the server: what the server logs meanwhile is b's.
    ClientRelay::Forwarding scope = relay_.forwarding("srv", b.session, "7");
    relay_.relay_notification("srv", "notifications/message", R"({"level":"info"})");
    EXPECT_TRUE(b.received("notifications/message"));
    EXPECT_TRUE(a.outbox.frames.empty());
    // Another server's forwarding says nothing of this one.
    ClientRelay::Forwarding elsewhere = relay_.forwarding("other", a.session, "8");
    relay_.relay_notification("srv", "notifications/message", R"({"level":"warning"})");
    EXPECT_TRUE(b.received("warning"));
    EXPECT_TRUE(a.outbox.frames.empty());
  }
  // The forward over: two sessions, nothing pending, nobody.
  relay_.relay_notification("srv", "notifications/message", R"({"level":"error"})");
  EXPECT_FALSE(a.received("error"));
  EXPECT_FALSE(b.received("error"));
}

TEST_F(ClientRelayTest, SessionsOfOneClientAreOneClientAndTheNewestRequestCarriesIt) {
  Client older(io_);
  Client newer(io_);
  Client stranger(io_);
  older.session->set_client_key("stateless 127.0.0.1");
  newer.session->set_client_key("stateless 127.0.0.1");
  ClientRelay::Forwarding first = relay_.forwarding("srv", older.session, "1");
  ClientRelay::Forwarding second = relay_.forwarding("srv", newer.session, "2");
  relay_.relay_notification("srv", "notifications/message", R"({"level":"info"})");
  EXPECT_TRUE(newer.received("notifications/message"));
  EXPECT_TRUE(older.outbox.frames.empty());
  // A session of another client pending on the server too: nobody can be told apart.
  stranger.session->set_client_key("stateless 127.0.0.2");
  ClientRelay::Forwarding third = relay_.forwarding("srv", stranger.session, "3");
  relay_.relay_notification("srv", "notifications/message", R"({"level":"alert"})");
  EXPECT_FALSE(newer.received("alert"));
  EXPECT_FALSE(stranger.received("alert"));
}

TEST_F(ClientRelayTest, AListenStreamKeepsAResourceSubscribedUntilTheLastSubscriberLeaves) {
  Client a(io_);
  relay_.add(a.session);
  const int listen_stream = 0;  // a listen stream's identity: any address
  EXPECT_TRUE(relay_.update_subscription("srv", "file:///a", a.session, true));
  EXPECT_TRUE(relay_.update_listener_subscription("srv", "file:///a", &listen_stream, true));
  // The session leaves; the listen stream still wants updates: the server is not told.
  EXPECT_FALSE(relay_.update_subscription("srv", "file:///a", a.session, false));
  EXPECT_TRUE(relay_.subscribed("srv"));
  EXPECT_TRUE(relay_.update_listener_subscription("srv", "file:///a", &listen_stream, false));
  EXPECT_FALSE(relay_.subscribed("srv"));
}

TEST_F(ClientRelayTest, AClosedSessionIsNotCountedAndReceivesNothing) {
  Client closed(io_);
  Client open(io_);
  relay_.add(closed.session);
  relay_.add(open.session);
  closed.session->on_closed();
  relay_.relay_notification("srv", "notifications/message", R"({"level":"info"})");
  EXPECT_TRUE(open.received("notifications/message"));
  EXPECT_TRUE(closed.outbox.frames.empty());
}

TEST_F(ClientRelayTest, ListChangedGoesToEverySession) {
  Client a(io_);
  Client b(io_);
  relay_.add(a.session);
  relay_.add(b.session);
  relay_.relay_notification("srv", "notifications/prompts/list_changed", "");
  EXPECT_TRUE(a.received("notifications/prompts/list_changed"));
  EXPECT_TRUE(b.received("notifications/prompts/list_changed"));
}

TEST_F(ClientRelayTest, AResourceUpdateGoesOnlyToTheSessionsSubscribedToItsUri) {
  Client subscribed(io_);
  Client other(io_);
  relay_.add(subscribed.session);
  relay_.add(other.session);
  EXPECT_TRUE(relay_.update_subscription("srv", "file:///a", subscribed.session, true));
  relay_.relay_notification("srv", "notifications/resources/updated", R"({"uri":"file:///a"})");
  relay_.relay_notification("srv", "notifications/resources/updated", R"({"uri":"file:///b"})");
  EXPECT_TRUE(subscribed.received("file:///a"));
  EXPECT_FALSE(subscribed.received("file:///b"));
  EXPECT_TRUE(other.outbox.frames.empty());
}

TEST_F(ClientRelayTest, TheServerIsToldToUnsubscribeOnlyWhenTheLastSessionLeaves) {
  Client a(io_);
  Client b(io_);
  EXPECT_TRUE(relay_.update_subscription("srv", "file:///a", a.session, true));
  EXPECT_TRUE(relay_.update_subscription("srv", "file:///a", b.session, true));
  EXPECT_FALSE(relay_.update_subscription("srv", "file:///a", a.session, false));
  EXPECT_TRUE(relay_.update_subscription("srv", "file:///a", b.session, false));
  // Nobody is subscribed any more: an update reaches no one.
  relay_.relay_notification("srv", "notifications/resources/updated", R"({"uri":"file:///a"})");
  EXPECT_TRUE(a.outbox.frames.empty());
  EXPECT_TRUE(b.outbox.frames.empty());
}

// The idle watch asks this: a server with a subscribed session is not idle-stopped.
TEST_F(ClientRelayTest, AServerIsSubscribedWhileAnOpenSessionHoldsOneOfItsResources) {
  Client a(io_);
  EXPECT_FALSE(relay_.subscribed("srv"));
  EXPECT_TRUE(relay_.update_subscription("srv", "file:///a", a.session, true));
  EXPECT_TRUE(relay_.subscribed("srv"));
  EXPECT_FALSE(relay_.subscribed("other")) << "a subscription belongs to its own server only";
  EXPECT_TRUE(relay_.update_subscription("srv", "file:///a", a.session, false));
  EXPECT_FALSE(relay_.subscribed("srv"));

  EXPECT_TRUE(relay_.update_subscription("srv", "file:///b", a.session, true));
  a.session->on_closed();
  EXPECT_FALSE(relay_.subscribed("srv")) << "a closed session holds no subscription";
}

}  // namespace
}  // namespace sluice::gateway
