// What the HTTP front end refuses before serving a request, from a parsed head or the error
// Beast read it with: RFC 9112 framing, and which read errors get an answer at all.
#include "transport/http_framing.hpp"

#include <gtest/gtest.h>
#include <boost/asio/error.hpp>
#include <boost/beast/http/error.hpp>

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace sluice::transport {
namespace {

namespace http = boost::beast::http;

http::request_header<> head(unsigned version,
                            std::initializer_list<std::pair<http::field, std::string>> fields) {
  http::request_header<> h;
  h.version(version);
  for (const auto& [name, value] : fields) h.insert(name, value);
  return h;
}

TEST(HeadRefusal, AcceptsOneHostAtMostOneOriginAndChunkedAlone) {
  EXPECT_FALSE(head_refusal(head(11, {{http::field::host, "localhost"}})));
  EXPECT_FALSE(head_refusal(head(10, {{http::field::host, "localhost"}})));
  EXPECT_FALSE(head_refusal(head(11, {{http::field::host, "localhost"},
                                      {http::field::origin, "http://localhost"},
                                      {http::field::transfer_encoding, "chunked"}})));
  // Empty list elements are allowed around the one coding.
  EXPECT_FALSE(head_refusal(head(
      11, {{http::field::host, "localhost"}, {http::field::transfer_encoding, " , chunked"}})));
}

TEST(HeadRefusal, RefusesAMissingEmptyOrRepeatedHostAndARepeatedOrigin) {
  for (auto h : {head(11, {}), head(10, {}), head(11, {{http::field::host, ""}}),
                 head(11, {{http::field::host, "localhost"}, {http::field::host, "localhost"}}),
                 head(11, {{http::field::host, "localhost"},
                           {http::field::origin, "http://localhost"},
                           {http::field::origin, "http://localhost"}})}) {
    auto refusal = head_refusal(h);
    ASSERT_TRUE(refusal);
    EXPECT_EQ(refusal->status, http::status::bad_request) << refusal->message;
  }
}

TEST(HeadRefusal, AnotherCodingBeforeChunkedIsNotImplementedAndAnUnframedBodyIsBad) {
  auto gzip = head_refusal(head(
      11, {{http::field::host, "localhost"}, {http::field::transfer_encoding, "gzip, chunked"}}));
  ASSERT_TRUE(gzip);
  EXPECT_EQ(gzip->status, http::status::not_implemented);
  for (auto h :
       {head(11, {{http::field::host, "h"}, {http::field::transfer_encoding, "gzip"}}),
        head(11, {{http::field::host, "h"},
                  {http::field::transfer_encoding, "chunked"},
                  {http::field::transfer_encoding, "chunked"}}),
        head(11, {{http::field::host, "h"}, {http::field::transfer_encoding, "chunked, gzip"}}),
        head(10, {{http::field::host, "h"}, {http::field::transfer_encoding, "chunked"}})}) {
    auto refusal = head_refusal(h);
    ASSERT_TRUE(refusal);
    EXPECT_EQ(refusal->status, http::status::bad_request) << refusal->message;
  }
}

TEST(ReadRefusal, TheSizeCapsAndTheVersionGetTheirOwnStatus) {
  auto headers = read_refusal(http::error::header_limit, 100);
  ASSERT_TRUE(headers);
  EXPECT_EQ(headers->status, http::status::request_header_fields_too_large);
  auto body = read_refusal(http::error::body_limit, 1234);
  ASSERT_TRUE(body);
  EXPECT_EQ(body->status, http::status::payload_too_large);
  EXPECT_NE(body->message.find("1234 bytes"), std::string::npos);
  auto version = read_refusal(http::error::bad_version, 100);
  ASSERT_TRUE(version);
  EXPECT_EQ(version->status, http::status::http_version_not_supported);
  auto framing = read_refusal(http::error::bad_content_length, 100);
  ASSERT_TRUE(framing);
  EXPECT_EQ(framing->status, http::status::bad_request);
}

TEST(ReadRefusal, TheEndOfTheConnectionATimeoutOrAResetGetNoAnswer) {
  EXPECT_FALSE(read_refusal(http::error::end_of_stream, 100));
  EXPECT_FALSE(read_refusal(http::error::partial_message, 100));
  EXPECT_FALSE(read_refusal(boost::asio::error::timed_out, 100));
  EXPECT_FALSE(read_refusal(boost::asio::error::connection_reset, 100));
}

// read_heads gives what head[name] gives for each header the front end reads: the first of
// its name, its name matched in any case, empty when absent (an Origin absent or empty apart).
TEST(ReadHeads, GivesTheFirstOfEachNameAsALookupByNameWould) {
  http::request_header<> h;
  h.insert(http::field::host, "127.0.0.1:8080");
  h.insert("mcp-session-id", "first-session");
  h.insert("MCP-SESSION-ID", "second-session");
  h.insert(http::field::content_type, "application/json");
  h.insert(http::field::accept, "application/json, text/event-stream");
  h.insert(http::field::accept, "*/*");
  h.insert("Mcp-Protocol-Version", "2025-11-25");
  h.insert("last-event-id", "3-7");
  h.insert(http::field::authorization, "Bearer t");
  h.insert("X-Other", "x");
  const RequestHeads heads = read_heads(h);
  for (const auto& [got, name] :
       std::initializer_list<std::pair<std::string_view, std::string_view>>{
           {heads.host, "Host"},
           {heads.session_id, "Mcp-Session-Id"},
           {heads.content_type, "Content-Type"},
           {heads.accept, "Accept"},
           {heads.protocol_version, "MCP-Protocol-Version"},
           {heads.last_event_id, "Last-Event-ID"},
           {heads.authorization, "Authorization"}}) {
    EXPECT_EQ(got, h[name]) << name;
  }
  EXPECT_EQ(heads.session_id, "first-session");
  EXPECT_EQ(heads.accept, "application/json, text/event-stream");
  EXPECT_FALSE(heads.origin.has_value());

  http::request_header<> bare;
  const RequestHeads none = read_heads(bare);
  EXPECT_TRUE(none.host.empty());
  EXPECT_TRUE(none.session_id.empty());
  EXPECT_TRUE(none.protocol_version.empty());
  EXPECT_FALSE(none.origin.has_value());

  http::request_header<> empty_origin;
  empty_origin.insert(http::field::origin, "");
  empty_origin.insert(http::field::origin, "http://localhost");
  const RequestHeads sent = read_heads(empty_origin);
  ASSERT_TRUE(sent.origin.has_value());
  EXPECT_EQ(*sent.origin, "");
}

}  // namespace
}  // namespace sluice::transport
