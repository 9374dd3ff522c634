// The OAuth token file: records keyed by server name and fingerprint, the file 0600 in a
// 0700 directory, records of other servers kept across saves, and value-free errors for a file
// that is not safe to use (readable by others, a symbolic link, not the format).
#include "store/token_store.hpp"

#include "store_files.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace sluice::store::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::string_view kSecret = "tOkEnSeCrEt";

TokenRecord record(std::string server, std::string fingerprint, std::string token) {
  TokenRecord r;
  r.server = std::move(server);
  r.fingerprint = std::move(fingerprint);
  r.issuer = "https://auth.example.com";
  r.token_endpoint = "https://auth.example.com/token";
  r.resource = "https://mcp.example.com";
  r.client =
      OAuthClientRecord{"client-1", "secret-" + std::string(kSecret), "client_secret_post", true};
  r.access_token = std::move(token);
  r.refresh_token = "refresh-" + std::string(kSecret);
  r.scope = "read write";
  r.expires_at_ms = 1'800'000'000'000;
  return r;
}

mode_t token_store_mode_of(const std::filesystem::path& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0);
  return st.st_mode & 07777;
}

TEST(TokenStore, ASavedRecordLoadsBackWholeForTheSameFingerprintOnly) {
  TempDir dir;
  TokenStore store(dir.path() / "state");
  const TokenRecord saved = record("remote", "fp-1", "access-" + std::string(kSecret));
  ASSERT_TRUE(store.save(saved));
  auto loaded = store.load("remote", "fp-1");
  ASSERT_TRUE(loaded && loaded->has_value());
  EXPECT_EQ(**loaded, saved);
  auto other = store.load("remote", "fp-2");
  ASSERT_TRUE(other);
  EXPECT_FALSE(other->has_value());
  auto missing = store.load("elsewhere", "fp-1");
  ASSERT_TRUE(missing);
  EXPECT_FALSE(missing->has_value());
}

TEST(TokenStore, TheFileIs0600InsideA0700DirectoryWhateverTheUmask) {
  TempDir dir;
  const mode_t old = ::umask(0);
  TokenStore store(dir.path() / "state");
  auto saved = store.save(record("remote", "fp-1", "a"));
  ::umask(old);
  ASSERT_TRUE(saved);
  EXPECT_EQ(token_store_mode_of(store.file()), 0600u);
  EXPECT_EQ(token_store_mode_of(dir.path() / "state"), 0700u);
  EXPECT_EQ(store.file().filename(), kTokenFileName);
}

TEST(TokenStore, SavingOneServerKeepsTheOthersAndANewDefinitionReplacesItsOwn) {
  TempDir dir;
  TokenStore store(dir.path() / "state");
  ASSERT_TRUE(store.save(record("a", "fp-a", "token-a")));
  ASSERT_TRUE(store.save(record("b", "fp-b", "token-b")));
  ASSERT_TRUE(store.save(record("a", "fp-a2", "token-a2")));
  auto a_old = store.load("a", "fp-a");
  ASSERT_TRUE(a_old);
  EXPECT_FALSE(a_old->has_value());
  auto a_new = store.load("a", "fp-a2");
  ASSERT_TRUE(a_new && a_new->has_value());
  EXPECT_EQ((*a_new)->access_token, "token-a2");
  auto b = store.load("b", "fp-b");
  ASSERT_TRUE(b && b->has_value());
  EXPECT_EQ((*b)->access_token, "token-b");
}

TEST(TokenStore, ForgetRemovesThatServerOnly) {
  TempDir dir;
  TokenStore store(dir.path() / "state");
  ASSERT_TRUE(store.save(record("a", "fp", "token-a")));
  ASSERT_TRUE(store.save(record("b", "fp", "token-b")));
  ASSERT_TRUE(store.forget("a"));
  auto a = store.load("a", "fp");
  ASSERT_TRUE(a);
  EXPECT_FALSE(a->has_value());
  auto b = store.load("b", "fp");
  ASSERT_TRUE(b && b->has_value());
  EXPECT_TRUE(store.forget("never-saved"));
}

TEST(TokenStore, AFileOthersCanReadIsRefusedWithoutItsContent) {
  TempDir dir;
  TokenStore store(dir.path() / "state");
  ASSERT_TRUE(store.save(record("remote", "fp", "access-" + std::string(kSecret))));
  ASSERT_EQ(::chmod(store.file().c_str(), 0644), 0);
  auto loaded = store.load("remote", "fp");
  ASSERT_FALSE(loaded);
  EXPECT_THAT(loaded.error().message, HasSubstr("chmod 600"));
  EXPECT_THAT(loaded.error().message, Not(HasSubstr(std::string(kSecret))));
}

TEST(TokenStore, ASymbolicLinkIsNotFollowed) {
  TempDir dir;
  const auto state = dir.path() / "state";
  std::filesystem::create_directory(state);
  ::chmod(state.c_str(), 0700);
  std::ofstream(dir.path() / "elsewhere") << "{}";
  std::filesystem::create_symlink(dir.path() / "elsewhere", state / kTokenFileName);
  TokenStore store(state);
  auto loaded = store.load("remote", "fp");
  ASSERT_FALSE(loaded);
  EXPECT_THAT(loaded.error().message, HasSubstr("symbolic link"));
}

TEST(TokenStore, AFileThatIsNotTheFormatIsAValueFreeErrorAndASaveStartsItOver) {
  TempDir dir;
  const auto state = dir.path() / "state";
  TokenStore store(state);
  ASSERT_TRUE(store.save(record("remote", "fp", "a")));
  {
    std::ofstream out(store.file(), std::ios::trunc);
    out << "not json " << kSecret;
  }
  auto loaded = store.load("remote", "fp");
  ASSERT_FALSE(loaded);
  EXPECT_THAT(loaded.error().message, Not(HasSubstr(std::string(kSecret))));
  ASSERT_TRUE(store.save(record("remote", "fp", "b")));
  auto again = store.load("remote", "fp");
  ASSERT_TRUE(again && again->has_value());
  EXPECT_EQ((*again)->access_token, "b");
}

TEST(TokenStore, WithoutAStateDirectoryEveryCallFails) {
  TokenStore store{std::filesystem::path()};
  EXPECT_FALSE(store.load("remote", "fp"));
  EXPECT_FALSE(store.save(record("remote", "fp", "a")));
  EXPECT_FALSE(store.forget("remote"));
}

}  // namespace
}  // namespace sluice::store::test
