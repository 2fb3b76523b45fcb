#include "act/serve/serve_jupyter.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <set>

#include "act/serve/serve_common.h"
#include "container_support.h"
#include "sys/fs.h"
#include "text_files.h"

namespace gpuenv {
namespace {

std::string contents(const std::string& path) {
  std::string out, err;
  fs::read_file_nofollow(path, 1 << 20, &out, &err);
  return out;
}

// A chosen token just long enough (32 characters).
const std::string kLong = "from-env-0123456789abcdef0123456";

class ServeJupyter : public ::testing::Test {
 protected:
  // A fresh directory under the test's scratch dir, removed after the test.
  std::string temp_dir() {
    std::string dir = scratch_.path() + "/" + std::to_string(++dirs_);
    mkdir(dir.c_str(), 0755);
    return dir;
  }
  testing::ScratchDir scratch_;
  int dirs_ = 0;
};

TEST_F(ServeJupyter, ProgramsInFallbackOrder) {
  EXPECT_EQ(jupyter_programs(),
            (std::vector<std::string>{"jupyter-lab", "jupyter-server", "jupyter-notebook"}));
}

TEST_F(ServeJupyter, ArgvCarriesNoTokenAndFailsOnABusyPort) {
  JupyterOptions o;
  o.port = 9999;
  o.ip = "127.0.0.1";
  o.root_dir = "/data";
  EXPECT_EQ(jupyter_argv("/usr/bin/jupyter-lab", o, false),
            (std::vector<std::string>{"/usr/bin/jupyter-lab", "--no-browser", "--ip=127.0.0.1",
                                      "--port=9999", "--port-retries=0", "--notebook-dir=/data"}));
  EXPECT_EQ(jupyter_argv("jupyter-server", o, true).back(), "--allow-root");
}

TEST_F(ServeJupyter, UrlPerProgramAndAddress) {
  JupyterOptions o;
  EXPECT_EQ(jupyter_url("/opt/conda/bin/jupyter-lab", o), "http://127.0.0.1:8888/lab");
  EXPECT_EQ(jupyter_url("jupyter-notebook", o), "http://127.0.0.1:8888/tree");
  o.ip = "::1";
  o.port = 80;
  EXPECT_EQ(jupyter_url("jupyter-server", o), "http://[::1]:80/");
}

TEST_F(ServeJupyter, GeneratedTokensAre128BitHexAndDiffer) {
  std::set<std::string> seen;
  for (int i = 0; i < 20; ++i) {
    std::string t, err;
    ASSERT_TRUE(generate_token(&t, &err)) << err;
    EXPECT_EQ(t.size(), 32u);
    EXPECT_EQ(t.find_first_not_of("0123456789abcdef"), std::string::npos) << t;
    EXPECT_TRUE(check_token(t, "generated", &err)) << "as strong as a chosen one must be: " << err;
    seen.insert(t);
  }
  EXPECT_EQ(seen.size(), 20u);
}

TEST_F(ServeJupyter, ValidToken) {
  EXPECT_TRUE(valid_token("abc-DEF_123.~"));
  EXPECT_FALSE(valid_token(""));
  EXPECT_FALSE(valid_token("has space"));
  EXPECT_FALSE(valid_token("new\nline"));
  EXPECT_FALSE(valid_token("caf\xc3\xa9"));
}

TEST_F(ServeJupyter, GeneratesA0600FileWithoutNewlineWhateverTheUmask) {
  std::string file = temp_dir() + "/sub/dir/jupyter_token", token, err;
  TokenSource source;
  mode_t old = umask(0);
  bool ok = ensure_token_file(file, "", &token, &source, &err);
  umask(old);
  ASSERT_TRUE(ok) << err;
  EXPECT_EQ(source, TokenSource::kGenerated);
  EXPECT_EQ(contents(file), token);  // Jupyter reads the file verbatim
  EXPECT_EQ(testing::mode_of(file), 0600u);
  EXPECT_EQ(testing::mode_of(file.substr(0, file.rfind('/'))), 0700u);
  std::string again;
  ASSERT_TRUE(ensure_token_file(file, "", &again, &source, &err)) << err;
  EXPECT_EQ(source, TokenSource::kFile);
  EXPECT_EQ(again, token) << "the stored token is reused";
}

TEST_F(ServeJupyter, AFileTokenIsTrimmedAndTightened) {
  std::string file = temp_dir() + "/token", token, err;
  ASSERT_TRUE(sys::create_exclusive(file, "  " + kLong + "\n", 0644, &err));
  TokenSource source;
  ASSERT_TRUE(ensure_token_file(file, "", &token, &source, &err)) << err;
  EXPECT_EQ(token, kLong);
  EXPECT_EQ(contents(file), kLong);
  EXPECT_EQ(testing::mode_of(file), 0600u);
}

TEST_F(ServeJupyter, AnEnvTokenReplacesTheFile) {
  std::string file = temp_dir() + "/token", token, err;
  ASSERT_TRUE(sys::create_exclusive(file, "old", 0600, &err));
  TokenSource source;
  ASSERT_TRUE(ensure_token_file(file, kLong, &token, &source, &err)) << err;
  EXPECT_EQ(source, TokenSource::kEnv);
  EXPECT_EQ(contents(file), kLong);
  EXPECT_EQ(testing::mode_of(file), 0600u);
  EXPECT_FALSE(ensure_token_file(file, "bad token", &token, &source, &err));
  EXPECT_NE(err.find("GPUENV_JUPYTER_TOKEN"), std::string::npos) << err;
}

TEST_F(ServeJupyter, AnEmptyTokenFileIsAnError) {
  std::string file = temp_dir() + "/token", token, err;
  ASSERT_TRUE(sys::create_exclusive(file, "\n", 0600, &err));
  TokenSource source;
  EXPECT_FALSE(ensure_token_file(file, "", &token, &source, &err));
  EXPECT_NE(err.find(file + ": expected one token"), std::string::npos) << err;
}

TEST_F(ServeJupyter, AChosenTokenNeeds32Characters) {
  ASSERT_EQ(kLong.size(), kMinTokenChars);
  std::string file = temp_dir() + "/token", token, err;
  TokenSource source;
  for (const std::string& weak : {std::string("a"), kLong.substr(1)}) {
    err.clear();
    EXPECT_FALSE(ensure_token_file(file, weak, &token, &source, &err)) << weak;
    EXPECT_NE(err.find("GPUENV_JUPYTER_TOKEN (or JUPYTER_TOKEN): the token is " +
                       std::to_string(weak.size()) + " characters long; it needs at least 32"),
              std::string::npos)
        << err;
    EXPECT_NE(err.find("openssl rand -hex 32"), std::string::npos) << err;
    if (weak.size() > 1) {
      EXPECT_EQ(err.find(weak), std::string::npos) << "the token is not echoed";
    }
    EXPECT_NE(access(file.c_str(), F_OK), 0) << "nothing written";
  }
  ASSERT_TRUE(sys::create_exclusive(file, "short-token\n", 0600, &err));
  EXPECT_FALSE(ensure_token_file(file, "", &token, &source, &err));
  EXPECT_NE(err.find(file + ": the token is 11 characters long"), std::string::npos) << err;
}

TEST_F(ServeJupyter, TheTokenFileMustBeARegularFileNotALinkNorAFifo) {
  std::string dir = temp_dir(), token, err;
  TokenSource source;
  std::string target = dir + "/target";
  ASSERT_TRUE(sys::create_exclusive(target, kLong, 0644, &err));
  ASSERT_EQ(symlink(target.c_str(), (dir + "/link").c_str()), 0);
  EXPECT_FALSE(ensure_token_file(dir + "/link", "", &token, &source, &err));
  EXPECT_NE(err.find(dir + "/link is a symbolic link"), std::string::npos) << err;
  EXPECT_EQ(testing::mode_of(target), 0644u) << "not tightened through the link";
  ASSERT_EQ(mkfifo((dir + "/fifo").c_str(), 0600), 0);
  err.clear();
  EXPECT_FALSE(ensure_token_file(dir + "/fifo", "", &token, &source, &err)) << "and does not hang";
  EXPECT_NE(err.find(dir + "/fifo: not a regular file (a FIFO)"), std::string::npos) << err;
  ASSERT_TRUE(sys::create_exclusive(dir + "/big", std::string(kMaxTokenFileBytes + 1, 'x'), 0600, &err));
  err.clear();
  EXPECT_FALSE(ensure_token_file(dir + "/big", "", &token, &source, &err));
  EXPECT_NE(err.find("is larger than 4096 bytes"), std::string::npos) << err;
}

}  // namespace
}  // namespace gpuenv
