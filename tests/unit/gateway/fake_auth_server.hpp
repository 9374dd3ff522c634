#pragma once
// An in-memory protected MCP server and its authorization server, served through an
// auth::Fetch: canned metadata documents at configurable locations, an authorization endpoint
// that redirects at once (as the conformance suite's does), a token endpoint and a
// registration endpoint. It records every request so that tests can check what the OAuth
// client sent, in which order. Tokens it issues contain kSecretMark, so a test can assert
// that no error message carries one.
#include "core/error.hpp"
#include "gateway/auth/codec.hpp"
#include "gateway/auth/fetch.hpp"
#include "gateway/auth/oauth_client.hpp"
#include "store/token_store.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "../run_until.hpp"

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sluice::gateway::auth::test {

namespace asio = boost::asio;
namespace bj = boost::json;

inline constexpr std::string_view kSecretMark = "SeCrEt";
inline constexpr std::string_view kRs = "http://localhost:7001";  // the MCP server's origin
inline constexpr std::string_view kAs = "http://localhost:7002";  // the authorization server

inline std::string percent_decode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size()) {
      out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

// name=value&... decoded.
inline std::map<std::string, std::string> decode_form(std::string_view text) {
  std::map<std::string, std::string> out;
  while (!text.empty()) {
    std::size_t amp = text.find('&');
    std::string_view pair = text.substr(0, amp);
    std::size_t eq = pair.find('=');
    out[percent_decode(pair.substr(0, eq))] =
        eq == std::string_view::npos ? std::string() : percent_decode(pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    text.remove_prefix(amp + 1);
  }
  return out;
}

inline std::map<std::string, std::string> query_of(std::string_view url) {
  std::size_t q = url.find('?');
  return q == std::string_view::npos ? std::map<std::string, std::string>{}
                                     : decode_form(url.substr(q + 1));
}

inline std::string without_query(std::string_view url) {
  return std::string(url.substr(0, url.find('?')));
}

class FakeAuthServer {
 public:
  // What is served where (full URLs, no query). Tests change these before the flow runs.
  std::string issuer = std::string(kAs);
  std::map<std::string, std::string> documents;  // GET url -> JSON body
  std::string prm_resource = std::string(kRs) + "/mcp";
  std::vector<std::string> prm_scopes;
  bj::object as_extra;  // merged into the authorization-server metadata
  std::vector<std::string> auth_methods = {"none"};
  bool registration = true;
  std::string registered_secret;  // "" : a public client
  // Authorization endpoint behaviour.
  enum class Authorize { redirect, wrong_state, login_page, error } authorize = Authorize::redirect;
  bool send_iss = true;
  int expires_in = 3600;
  bool issue_refresh = true;
  bool refuse_refresh = false;
  bool refuse_code = false;  // the authorization_code grant refused, quoting a secret

  std::vector<transport::HttpRequest> requests;
  std::vector<std::map<std::string, std::string>> token_forms;
  std::vector<std::map<std::string, std::string>> authorize_queries;
  std::vector<bj::object> registrations;
  std::vector<std::string> issued;  // access tokens, in order
  int counter = 0;

  void serve_standard() {
    documents[std::string(kRs) + "/.well-known/oauth-protected-resource/mcp"] = prm();
    documents[issuer_origin() + "/.well-known/oauth-authorization-server" + issuer_path()] =
        as_metadata();
  }
  std::string prm() const {
    bj::object o{{"resource", prm_resource},
                 {"authorization_servers", bj::array{bj::value(issuer)}}};
    if (!prm_scopes.empty()) {
      bj::array scopes;
      for (const auto& s : prm_scopes) scopes.emplace_back(s);
      o["scopes_supported"] = scopes;
    }
    return bj::serialize(o);
  }
  std::string as_metadata() const {
    bj::array methods;
    for (const auto& m : auth_methods) methods.emplace_back(m);
    bj::object o{{"issuer", issuer},
                 {"authorization_endpoint", std::string(kAs) + "/authorize"},
                 {"token_endpoint", std::string(kAs) + "/token"},
                 {"response_types_supported", bj::array{"code"}},
                 {"code_challenge_methods_supported", bj::array{"S256"}},
                 {"token_endpoint_auth_methods_supported", methods},
                 {"authorization_response_iss_parameter_supported", true}};
    if (registration) o["registration_endpoint"] = std::string(kAs) + "/register";
    for (const auto& kv : as_extra) o[kv.key()] = kv.value();
    return bj::serialize(o);
  }
  std::string issuer_origin() const { return std::string(kAs); }
  std::string issuer_path() const { return issuer.substr(kAs.size()); }

  std::vector<std::string> urls() const {
    std::vector<std::string> out;
    for (const auto& r : requests) out.push_back(without_query(r.url));
    return out;
  }

  // Every answer comes after a turn of the loop (a real server's latency), so that flows
  // started together interleave.
  bool suspend = false;

  Fetch fetch() {
    return [this](transport::HttpRequest request)
               -> asio::awaitable<transport::HttpResult<transport::HttpResponse>> {
      if (suspend) co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
      co_return handle(std::move(request));
    };
  }

  transport::HttpResponse handle(transport::HttpRequest request) {
    requests.push_back(request);
    const std::string path = without_query(request.url);
    if (request.method == "GET" && documents.contains(path)) return json(200, documents.at(path));
    if (path == std::string(kAs) + "/authorize") return authorize_response(request.url);
    if (path == std::string(kAs) + "/token" && request.method == "POST") return token(request);
    if (path == std::string(kAs) + "/register" && registration) return register_client(request);
    return json(404, R"({"error":"not_found"})");
  }

 private:
  static transport::HttpResponse json(int status, std::string body) {
    transport::HttpResponse r;
    r.status = status;
    r.headers = {{"Content-Type", "application/json"}};
    r.body = std::move(body);
    return r;
  }

  transport::HttpResponse authorize_response(const std::string& url) {
    auto q = query_of(url);
    authorize_queries.push_back(q);
    if (authorize == Authorize::login_page) {
      transport::HttpResponse page;
      page.status = 200;
      page.body = "<html>log in</html>";
      return page;
    }
    std::string location = q["redirect_uri"] + "?code=code-" + std::string(kSecretMark);
    if (authorize == Authorize::error) location = q["redirect_uri"] + "?error=access_denied";
    const std::string state = authorize == Authorize::wrong_state ? "forged" : q["state"];
    location += "&state=" + percent_encode(state);
    if (send_iss) location += "&iss=" + percent_encode(issuer);
    transport::HttpResponse r;
    r.status = 302;
    r.headers = {{"Location", location}};
    return r;
  }

  transport::HttpResponse token(const transport::HttpRequest& request) {
    auto form = decode_form(request.body);
    token_forms.push_back(form);
    if (form["grant_type"] == "refresh_token" && refuse_refresh) {
      return json(400, R"({"error":"invalid_grant","error_description":"x )" +
                           std::string(kSecretMark) + R"("})");
    }
    if (form["grant_type"] == "authorization_code" && refuse_code) {
      return json(400, R"({"error":"odd_)" + std::string(kSecretMark) +
                           R"(","error_description":")" + std::string(kSecretMark) + R"("})");
    }
    ++counter;
    std::string access = "access-" + std::to_string(counter) + "-" + std::string(kSecretMark);
    issued.push_back(access);
    bj::object o{{"access_token", access}, {"token_type", "Bearer"}};
    if (expires_in > 0) o["expires_in"] = expires_in;
    if (issue_refresh) {
      o["refresh_token"] = "refresh-" + std::to_string(counter) + "-" + std::string(kSecretMark);
    }
    if (authorize_queries.size() > 0 && authorize_queries.back().contains("scope")) {
      o["scope"] = authorize_queries.back()["scope"];
    }
    return json(200, bj::serialize(o));
  }

  transport::HttpResponse register_client(const transport::HttpRequest& request) {
    registrations.push_back(bj::parse(request.body).as_object());
    bj::object o{{"client_id", "dyn-client"}};
    if (!registered_secret.empty()) o["client_secret"] = registered_secret;
    o["token_endpoint_auth_method"] = registered_secret.empty() ? "none" : auth_methods.front();
    return json(201, bj::serialize(o));
  }
};

class TempStateDir {
 public:
  TempStateDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "sluice-oauth-XXXXXX").string();
    EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
    path_ = pattern;
  }
  ~TempStateDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempStateDir(const TempStateDir&) = delete;
  TempStateDir& operator=(const TempStateDir&) = delete;
  std::filesystem::path state() const { return path_ / "state"; }

 private:
  std::filesystem::path path_;
};

// Runs `work` on `io` until it completes.
template <class T>
T run(asio::io_context& io, asio::awaitable<T> work) {
  std::optional<T> out;
  asio::co_spawn(
      io, [&]() -> asio::awaitable<void> { out.emplace(co_await std::move(work)); },
      asio::detached);
  EXPECT_TRUE(sluice::test::run_until(io, [&] { return out.has_value(); }));
  return std::move(*out);
}

// The pieces of one test: the fake, a store in a scratch directory, a client.
struct OAuthHarness {
  explicit OAuthHarness(config::OAuthSettings settings = {}) : store(dir.state()) {
    options.server = "remote";
    options.fingerprint = "fp-1";
    options.server_url = std::string(kRs) + "/mcp";
    options.settings = std::move(settings);
    options.now_ms = [this] { return now_ms; };
  }
  OAuthClient& client() {
    if (!made) made = std::make_unique<OAuthClient>(io, options, fake.fetch(), store);
    return *made;
  }
  AuthResult<std::string> unauthorized(int status, std::string challenge, std::string sent = {}) {
    return run(
        io, client().on_unauthorized(Unauthorized{status, std::move(challenge), std::move(sent)}));
  }

  asio::io_context io;
  FakeAuthServer fake;
  TempStateDir dir;
  store::TokenStore store;
  OAuthClientOptions options;
  std::int64_t now_ms = 1'800'000'000'000;
  std::unique_ptr<OAuthClient> made;
};

inline std::string challenge_for(std::string_view prm_url, std::string_view scope = {}) {
  std::string out = "Bearer resource_metadata=\"" + std::string(prm_url) + "\"";
  if (!scope.empty()) out += ", scope=\"" + std::string(scope) + "\"";
  return out;
}

}  // namespace sluice::gateway::auth::test
