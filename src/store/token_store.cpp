#include "store/token_store.hpp"

#include "core/json.hpp"
#include "core/private_file.hpp"
#include "store/cache_file.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <utility>
#include <vector>

namespace sluice::store {
namespace bj = boost::json;
namespace {

constexpr int kFormatVersion = 1;

core::Error fail(std::string_view what) { return core::make_error(std::string(what)); }

constexpr std::string_view kNoun = "the token file";

std::string text_of(const bj::object& o, std::string_view key) {
  const bj::value* v = o.if_contains(key);
  const bj::string* s = v != nullptr ? v->if_string() : nullptr;
  return s != nullptr ? std::string(s->data(), s->size()) : std::string();
}

std::optional<TokenRecord> record_of(const bj::value& v) {
  const bj::object* o = v.if_object();
  if (o == nullptr) return std::nullopt;
  TokenRecord r;
  r.server = text_of(*o, "server");
  r.fingerprint = text_of(*o, "fingerprint");
  if (r.server.empty() || r.fingerprint.empty()) return std::nullopt;
  r.issuer = text_of(*o, "issuer");
  r.token_endpoint = text_of(*o, "token_endpoint");
  r.resource = text_of(*o, "resource");
  if (const bj::value* c = o->if_contains("client"); c != nullptr && c->is_object()) {
    const bj::object& client = c->get_object();
    r.client.client_id = text_of(client, "client_id");
    r.client.client_secret = text_of(client, "client_secret");
    r.client.auth_method = text_of(client, "auth_method");
    const bj::value* reg = client.if_contains("registered");
    r.client.registered = reg != nullptr && reg->is_bool() && reg->get_bool();
  }
  r.access_token = text_of(*o, "access_token");
  r.refresh_token = text_of(*o, "refresh_token");
  r.scope = text_of(*o, "scope");
  if (const bj::value* e = o->if_contains("expires_at_ms"); e != nullptr && e->is_int64()) {
    r.expires_at_ms = e->get_int64();
  }
  return r;
}

bj::value value_of(const TokenRecord& r) {
  bj::object client{{"client_id", r.client.client_id},
                    {"client_secret", r.client.client_secret},
                    {"auth_method", r.client.auth_method},
                    {"registered", r.client.registered}};
  return bj::object{{"server", r.server},
                    {"fingerprint", r.fingerprint},
                    {"issuer", r.issuer},
                    {"token_endpoint", r.token_endpoint},
                    {"resource", r.resource},
                    {"client", std::move(client)},
                    {"access_token", r.access_token},
                    {"refresh_token", r.refresh_token},
                    {"scope", r.scope},
                    {"expires_at_ms", r.expires_at_ms}};
}

// Every record in the file's text; a text that is not the format is an error.
core::Result<std::vector<TokenRecord>> parse_records(std::string_view text) {
  std::vector<TokenRecord> out;
  if (text.empty()) return out;
  auto doc = core::json::parse_strict(text, core::json::ParseLimits{});
  if (!doc || !doc->is_object()) return fail("the token file is not valid JSON");
  const bj::value* servers = doc->get_object().if_contains("servers");
  if (servers == nullptr || !servers->is_array()) return fail("the token file has no servers list");
  for (const bj::value& v : servers->get_array()) {
    if (std::optional<TokenRecord> r = record_of(v)) out.push_back(std::move(*r));
  }
  return out;
}

// Writes `records` to a temporary file (0600) and renames it over `file`.
core::Result<void> write_records(const std::filesystem::path& file,
                                 const std::vector<TokenRecord>& records) {
  bj::array list;
  for (const TokenRecord& r : records) list.push_back(value_of(r));
  const std::string text =
      bj::serialize(bj::object{{"version", kFormatVersion}, {"servers", std::move(list)}});
  if (std::optional<core::PrivateFileProblem> problem = core::replace_private_file(file, text)) {
    return fail(core::describe(*problem, kNoun, file));
  }
  return {};
}

// The records on disk for a change: an unreadable format starts over (its tokens are lost
// either way), a file that is not ours is an error.
core::Result<std::vector<TokenRecord>> records_for_change(const std::filesystem::path& file) {
  core::Result<std::string> text = core::read_private_text(file, kMaxTokenFileBytes, kNoun);
  if (!text) return text.error();
  core::Result<std::vector<TokenRecord>> records = parse_records(*text);
  if (!records) return std::vector<TokenRecord>{};
  return records;
}

}  // namespace

TokenStore::TokenStore(std::filesystem::path state_dir)
    : dir_(std::move(state_dir)), file_(dir_.empty() ? dir_ : dir_ / kTokenFileName) {}

core::Result<std::optional<TokenRecord>> TokenStore::load(std::string_view server,
                                                          std::string_view fingerprint) const {
  if (dir_.empty()) return fail("no state directory (HOME is not set)");
  core::Result<std::string> text = core::read_private_text(file_, kMaxTokenFileBytes, kNoun);
  if (!text) return text.error();
  core::Result<std::vector<TokenRecord>> records = parse_records(*text);
  if (!records) return records.error();
  for (TokenRecord& r : *records) {
    if (r.server == server && r.fingerprint == fingerprint) {
      return std::optional<TokenRecord>(std::move(r));
    }
  }
  return std::optional<TokenRecord>();
}

core::Result<void> TokenStore::save(const TokenRecord& record) {
  if (std::string problem = detail::prepare_directory(dir_); !problem.empty()) {
    return fail(problem);
  }
  core::PrivateFileLock lock(file_);
  if (!lock.held()) return fail("the token file's lock cannot be taken (not permitted)");
  core::Result<std::vector<TokenRecord>> records = records_for_change(file_);
  if (!records) return records.error();
  std::erase_if(*records, [&](const TokenRecord& r) { return r.server == record.server; });
  records->push_back(record);
  return write_records(file_, *records);
}

core::Result<void> TokenStore::forget(std::string_view server) {
  if (dir_.empty()) return fail("no state directory (HOME is not set)");
  std::error_code ec;
  if (!std::filesystem::exists(dir_, ec)) return {};  // nothing was ever saved
  core::PrivateFileLock lock(file_);
  if (!lock.held()) return fail("the token file's lock cannot be taken (not permitted)");
  core::Result<std::vector<TokenRecord>> records = records_for_change(file_);
  if (!records) return records.error();
  const std::size_t before = records->size();
  std::erase_if(*records, [&](const TokenRecord& r) { return r.server == server; });
  if (records->size() == before) return {};
  return write_records(file_, *records);
}

}  // namespace sluice::store
