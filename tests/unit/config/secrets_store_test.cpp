#include "config/secrets_store.hpp"

#include "config/interpolate.hpp"
#include "config_files.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace sluice::config {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::Pair;

mode_t mode_of(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0);
  return st.st_mode & 07777;
}

EnvLookup secrets_store_env_of(std::map<std::string, std::string, std::less<>> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

class SecretsStoreTest : public ::testing::Test {
 protected:
  test::TempDir tmp;
  fs::path dir = tmp.path() / "config" / "sluice";
  SecretsStore store{dir};
};

TEST_F(SecretsStoreTest, AStoreThatWasNeverWrittenHoldsNoSecretsAndCreatesNothing) {
  auto all = store.load();
  ASSERT_TRUE(all) << all.error().message;
  EXPECT_THAT(*all, IsEmpty());
  EXPECT_FALSE(fs::exists(dir));
}

TEST_F(SecretsStoreTest, SetCreatesAPrivateDirectoryAndAPrivateFileWhateverTheUmask) {
  const mode_t old = ::umask(0);
  auto saved = store.set("GITHUB_TOKEN", "ghp_value");
  ::umask(old);
  ASSERT_TRUE(saved) << saved.error().message;
  EXPECT_EQ(mode_of(dir), 0700);
  EXPECT_EQ(mode_of(store.file()), 0600);
  auto all = store.load();
  ASSERT_TRUE(all) << all.error().message;
  EXPECT_THAT(*all, ElementsAre(Pair("GITHUB_TOKEN", "ghp_value")));
}

TEST_F(SecretsStoreTest, SetReplacesOneSecretAndKeepsTheOthers) {
  ASSERT_TRUE(store.set("A", "1"));
  ASSERT_TRUE(store.set("B", "2"));
  ASSERT_TRUE(store.set("A", "3"));
  auto all = store.load();
  ASSERT_TRUE(all);
  EXPECT_THAT(*all, ElementsAre(Pair("A", "3"), Pair("B", "2")));
}

TEST_F(SecretsStoreTest, ValuesWithNewlinesQuotesAndUnicodeReadBackByteForByte) {
  const std::string value = "line one\nline \"two\"\t\\ é ✓";
  ASSERT_TRUE(store.set("KEY", value));
  auto all = store.load();
  ASSERT_TRUE(all);
  EXPECT_EQ(all->at("KEY"), value);
}

TEST_F(SecretsStoreTest, RemoveSaysWhetherTheSecretWasThere) {
  ASSERT_TRUE(store.set("A", "1"));
  ASSERT_TRUE(store.set("B", "2"));
  auto gone = store.remove("A");
  ASSERT_TRUE(gone);
  EXPECT_TRUE(*gone);
  auto again = store.remove("A");
  ASSERT_TRUE(again);
  EXPECT_FALSE(*again);
  auto all = store.load();
  ASSERT_TRUE(all);
  EXPECT_THAT(*all, ElementsAre(Pair("B", "2")));
}

TEST_F(SecretsStoreTest, AFileOthersCanReadIsRefusedWithTheChmodThatFixesItAndNoValue) {
  ASSERT_TRUE(store.set("TOKEN", "sentinel-value-4242"));
  ASSERT_EQ(::chmod(store.file().c_str(), 0644), 0);
  auto all = store.load();
  ASSERT_FALSE(all);
  EXPECT_THAT(all.error().message, HasSubstr("mode 0644"));
  EXPECT_THAT(all.error().message, HasSubstr("chmod 600 " + store.file().string()));
  EXPECT_THAT(all.error().message, Not(HasSubstr("sentinel-value-4242")));
  // Refused, not repaired: the mode stays as the operator left it, and set refuses too.
  EXPECT_EQ(mode_of(store.file()), 0644);
  auto saved = store.set("OTHER", "x");
  ASSERT_FALSE(saved);
  EXPECT_THAT(saved.error().message, HasSubstr("chmod 600"));
  EXPECT_EQ(mode_of(store.file()), 0644);
}

TEST_F(SecretsStoreTest, ADirectoryOthersCanEnterIsRefusedWithTheChmodThatFixesIt) {
  ASSERT_TRUE(store.set("TOKEN", "value"));
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  auto all = store.load();
  ASSERT_FALSE(all);
  EXPECT_THAT(all.error().message, HasSubstr("mode 0755"));
  EXPECT_THAT(all.error().message, HasSubstr("chmod 700 " + dir.string()));
  EXPECT_FALSE(store.remove("TOKEN"));
  EXPECT_EQ(mode_of(dir), 0755);
}

TEST_F(SecretsStoreTest, ASymbolicLinkInPlaceOfTheFileIsNotFollowed) {
  ASSERT_TRUE(store.set("TOKEN", "value"));
  const fs::path elsewhere = tmp.path() / "elsewhere.json";
  fs::rename(store.file(), elsewhere);
  fs::create_symlink(elsewhere, store.file());
  auto all = store.load();
  ASSERT_FALSE(all);
  EXPECT_THAT(all.error().message, HasSubstr("symbolic link"));
}

TEST_F(SecretsStoreTest, AFileNotInTheFormatIsRefusedWithoutQuotingIt) {
  fs::create_directories(dir);
  ASSERT_EQ(::chmod(dir.c_str(), 0700), 0);
  test::write(store.file(), R"({"version":1,"secrets":{"A":"sentinel-7","B":3}})");
  ASSERT_EQ(::chmod(store.file().c_str(), 0600), 0);
  auto all = store.load();
  ASSERT_FALSE(all);
  EXPECT_THAT(all.error().message, HasSubstr("not in sluice's format"));
  EXPECT_THAT(all.error().message, Not(HasSubstr("sentinel-7")));
}

TEST_F(SecretsStoreTest, InvalidNamesEmptyValuesNulAndNonUtf8AreRefusedAndNothingIsWritten) {
  EXPECT_FALSE(store.set("1ABC", "x"));
  EXPECT_FALSE(store.set("A-B", "x"));
  EXPECT_FALSE(store.set("", "x"));
  EXPECT_FALSE(store.set("A", ""));
  EXPECT_FALSE(store.set("A", std::string("a\0b", 3)));
  EXPECT_FALSE(store.set("A", "\xff\xfe"));
  EXPECT_FALSE(store.set("A", std::string(kMaxSecretValueBytes + 1, 'x')));
  EXPECT_FALSE(fs::exists(store.file()));
}

TEST_F(SecretsStoreTest, ConcurrentSetsUnderTheLockLoseNoSecret) {
  constexpr int kWriters = 8;
  std::vector<std::thread> writers;
  for (int i = 0; i < kWriters; ++i) {
    writers.emplace_back([this, i] {
      SecretsStore own(dir);
      EXPECT_TRUE(own.set("S" + std::to_string(i), "v" + std::to_string(i)));
    });
  }
  for (auto& t : writers) t.join();
  auto all = store.load();
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), static_cast<std::size_t>(kWriters));
  // No temporary file is left beside it.
  for (const auto& entry : fs::directory_iterator(dir)) {
    EXPECT_THAT(entry.path().filename().string(), Not(HasSubstr(".tmp-")));
  }
}

TEST(SecretsDir, IsUnderAnAbsoluteXdgConfigHomeElseUnderHomeDotConfig) {
  EXPECT_EQ(secrets_dir_of(secrets_store_env_of({{"XDG_CONFIG_HOME", "/x/cfg"}, {"HOME", "/h"}})),
            fs::path("/x/cfg/sluice"));
  EXPECT_EQ(secrets_dir_of(secrets_store_env_of({{"XDG_CONFIG_HOME", "relative"}, {"HOME", "/h"}})),
            fs::path("/h/.config/sluice"));
  EXPECT_EQ(secrets_dir_of(secrets_store_env_of({{"HOME", "/h"}})), fs::path("/h/.config/sluice"));
  EXPECT_EQ(secrets_dir_of(secrets_store_env_of({})), fs::path());
}

TEST(SecretsLookup, TheEnvironmentWinsThenTheStoreAnswers) {
  EnvLookup lookup = environment_then_secrets(
      secrets_store_env_of({{"BOTH", "from-env"}, {"EMPTY", ""}}),
      {{"BOTH", "from-store"}, {"ONLY_STORE", "stored"}, {"EMPTY", "stored"}});
  EXPECT_EQ(lookup("BOTH"), "from-env");
  EXPECT_EQ(lookup("ONLY_STORE"), "stored");
  EXPECT_EQ(lookup("EMPTY"), "");  // set in the environment, even empty, wins
  EXPECT_EQ(lookup("NEITHER"), std::nullopt);
  Expansion e = interpolate("Bearer ${ONLY_STORE} ${NEITHER}", lookup);
  EXPECT_EQ(e.text, "Bearer stored ");
  EXPECT_THAT(e.unset, ElementsAre("NEITHER"));
}

}  // namespace
}  // namespace sluice::config
