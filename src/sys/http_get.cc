#include "sys/http_get.h"

#include <map>
#include <memory>
#include <mutex>

#include "sys/bytes.h"
#include "sys/dynamic_library.h"

namespace gpuenv::sys {
namespace {

// libcurl's ABI, the subset used: an opaque handle and int codes. The
// option and info numbers are those of curl 7.88.1's include/curl/curl.h
// (Debian 12's libcurl4); libcurl never renumbers them.
using CurlHandle = void;
using CurlWrite = std::size_t (*)(char*, std::size_t, std::size_t, void*);
constexpr int kCurleOk = 0;
constexpr int kCurleWriteError = 23;      // CURLE_WRITE_ERROR: our write callback refused
constexpr int kCurleTimedOut = 28;        // CURLE_OPERATION_TIMEDOUT
constexpr int kCurleUnknownOption = 48;   // CURLE_UNKNOWN_OPTION
constexpr int kOptWriteData = 10001;      // CURLOPT_WRITEDATA: CBPOINT (10000) + 1
constexpr int kOptUrl = 10002;            // CURLOPT_URL: STRINGPOINT (10000) + 2
constexpr int kOptErrorBuffer = 10010;    // CURLOPT_ERRORBUFFER: OBJECTPOINT + 10
constexpr int kOptWriteFunction = 20011;  // CURLOPT_WRITEFUNCTION: FUNCTIONPOINT (20000) + 11
constexpr int kOptUserAgent = 10018;      // CURLOPT_USERAGENT
constexpr int kOptFollowLocation = 52;    // CURLOPT_FOLLOWLOCATION: LONG (0) + 52
constexpr int kOptNoSignal = 99;          // CURLOPT_NOSIGNAL
constexpr int kOptAcceptEncoding = 10102;  // CURLOPT_ACCEPT_ENCODING
constexpr int kOptTimeoutMs = 155;         // CURLOPT_TIMEOUT_MS
constexpr int kOptConnectTimeoutMs = 156;  // CURLOPT_CONNECTTIMEOUT_MS
constexpr int kOptProtocols = 181;         // CURLOPT_PROTOCOLS: a bitmask, before 7.85
constexpr int kOptProtocolsStr = 10318;    // CURLOPT_PROTOCOLS_STR, 7.85 and later
constexpr long kProtoHttpAndHttps = 1 | 2;     // CURLPROTO_HTTP | CURLPROTO_HTTPS
constexpr int kInfoResponseCode = 0x200002;  // CURLINFO_RESPONSE_CODE: LONG (0x200000) + 2
constexpr int kInfoContentType = 0x100012;   // CURLINFO_CONTENT_TYPE: STRING (0x100000) + 18
constexpr std::size_t kErrorSize = 256;      // CURL_ERROR_SIZE

struct Curl {
  DynamicLibrary library;
  Fn<CurlHandle* (*)()> easy_init;
  Fn<int (*)(CurlHandle*, int, ...)> easy_setopt;
  Fn<int (*)(CurlHandle*)> easy_perform;
  Fn<int (*)(CurlHandle*, int, ...)> easy_getinfo;
  Fn<void (*)(CurlHandle*)> easy_cleanup;
  Fn<const char* (*)(int)> easy_strerror;
};

constexpr const char* kInstall = "install libcurl4 (Debian, Ubuntu) or libcurl (RHEL, Fedora)";

std::unique_ptr<Curl> open_curl(const std::string& name, std::string* err) {
  auto c = std::make_unique<Curl>();
  std::string why;
  // Kept mapped once opened: libcurl's TLS libraries register exit handlers.
  if (!c->library.open(name, &why, /*keep_loaded=*/true)) {
    *err = "libcurl is not here (" + why + "): " + kInstall;
    return nullptr;
  }
  const Symbol table[] = {
      {{"curl_easy_init"}, &c->easy_init, true},         {{"curl_easy_setopt"}, &c->easy_setopt, true},
      {{"curl_easy_perform"}, &c->easy_perform, true},   {{"curl_easy_getinfo"}, &c->easy_getinfo, true},
      {{"curl_easy_cleanup"}, &c->easy_cleanup, true},   {{"curl_easy_strerror"}, &c->easy_strerror, true},
  };
  if (!c->library.resolve(table, &why)) {
    *err = name + " has no " + why + ", so it is not libcurl: " + kInstall;
    return nullptr;
  }
  return c;
}

// The library named, opened once per process and kept; nullptr with *err.
Curl* curl_library(const std::string& name, std::string* err) {
  static std::mutex mu;
  static auto* opened = new std::map<std::string, std::unique_ptr<Curl>>();  // never freed: kept mapped
  std::lock_guard<std::mutex> lock(mu);
  auto it = opened->find(name);
  if (it != opened->end()) return it->second.get();
  std::unique_ptr<Curl> c = open_curl(name, err);
  if (!c) return nullptr;
  return opened->emplace(name, std::move(c)).first->second.get();
}

struct Sink {
  std::string* body;
  std::size_t max;
  bool over = false;
};

std::size_t write_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto* sink = static_cast<Sink*>(user);
  std::size_t bytes = size * n;
  if (bytes > sink->max - sink->body->size()) {
    sink->over = true;
    return 0;  // libcurl stops with CURLE_WRITE_ERROR
  }
  sink->body->append(data, bytes);
  return bytes;
}

// An easy handle, cleaned up when it goes.
class Easy {
 public:
  explicit Easy(const Curl& c) : c_(c), h_(c.easy_init.call()) {}
  ~Easy() {
    if (h_ != nullptr) c_.easy_cleanup.call(h_);
  }
  Easy(const Easy&) = delete;
  Easy& operator=(const Easy&) = delete;
  CurlHandle* get() const { return h_; }

 private:
  const Curl& c_;
  CurlHandle* h_;
};

// Limits to http and https: by name from 7.85, else as the older bitmask.
int set_protocols(const Curl& c, CurlHandle* h) {
  int rc = c.easy_setopt.call(h, kOptProtocolsStr, "http,https");
  if (rc == kCurleUnknownOption) rc = c.easy_setopt.call(h, kOptProtocols, kProtoHttpAndHttps);
  return rc;
}

// Every option of the call; the first that fails, with its name in *which.
int set_options(const Curl& c, CurlHandle* h, const std::string& url, const HttpGetOptions& o, Sink* sink,
                char* errbuf, const char** which) {
  struct Step {
    const char* name;
    int rc;
  };
  CurlWrite write = write_body;
  const Step steps[] = {
      {"CURLOPT_URL", c.easy_setopt.call(h, kOptUrl, url.c_str())},
      {"CURLOPT_PROTOCOLS_STR", set_protocols(c, h)},
      {"CURLOPT_FOLLOWLOCATION", c.easy_setopt.call(h, kOptFollowLocation, 0L)},
      {"CURLOPT_NOSIGNAL", c.easy_setopt.call(h, kOptNoSignal, 1L)},
      {"CURLOPT_CONNECTTIMEOUT_MS", c.easy_setopt.call(h, kOptConnectTimeoutMs, o.connect_timeout_ms)},
      {"CURLOPT_TIMEOUT_MS", c.easy_setopt.call(h, kOptTimeoutMs, o.total_timeout_ms)},
      {"CURLOPT_ACCEPT_ENCODING", c.easy_setopt.call(h, kOptAcceptEncoding, "")},
      {"CURLOPT_USERAGENT", c.easy_setopt.call(h, kOptUserAgent, "gpuenv")},
      {"CURLOPT_ERRORBUFFER", c.easy_setopt.call(h, kOptErrorBuffer, errbuf)},
      {"CURLOPT_WRITEFUNCTION", c.easy_setopt.call(h, kOptWriteFunction, write)},
      {"CURLOPT_WRITEDATA", c.easy_setopt.call(h, kOptWriteData, static_cast<void*>(sink))},
  };
  for (const Step& s : steps)
    if (s.rc != kCurleOk) {
      *which = s.name;
      return s.rc;
    }
  return kCurleOk;
}

std::string perform_error(const Curl& c, int rc, const char* errbuf, const Sink& sink, const HttpGetOptions& o) {
  if (rc == kCurleWriteError && sink.over)
    return "the answer is over " + human_bytes(o.max_bytes) + ", the most gpuenv reads";
  std::string text = errbuf[0] != '\0' ? errbuf : c.easy_strerror.call(rc);
  if (rc == kCurleTimedOut)
    text += " (gpuenv waits " + std::to_string(o.connect_timeout_ms) + " ms to connect and " +
            std::to_string(o.total_timeout_ms) + " ms in all)";
  return text;
}

}  // namespace

bool http_get(const std::string& url, const HttpGetOptions& options, HttpResponse* out, std::string* err) {
  std::string why;
  const Curl* c = curl_library(options.library, &why);
  if (c == nullptr) {
    *err = "GET " + url + ": " + why;
    return false;
  }
  Easy easy(*c);
  if (easy.get() == nullptr) {
    *err = "GET " + url + ": curl_easy_init failed (out of memory?)";
    return false;
  }
  *out = HttpResponse{};
  Sink sink{&out->body, options.max_bytes};
  char errbuf[kErrorSize] = {};
  const char* which = "";
  int rc = set_options(*c, easy.get(), url, options, &sink, errbuf, &which);
  if (rc != kCurleOk) {
    *err = "GET " + url + ": curl_easy_setopt(" + which + "): " + c->easy_strerror.call(rc);
    return false;
  }
  rc = c->easy_perform.call(easy.get());
  if (rc != kCurleOk) {
    *err = "GET " + url + ": " + perform_error(*c, rc, errbuf, sink, options);
    return false;
  }
  c->easy_getinfo.call(easy.get(), kInfoResponseCode, &out->status);
  const char* type = nullptr;
  if (c->easy_getinfo.call(easy.get(), kInfoContentType, &type) == kCurleOk && type != nullptr)
    out->content_type = type;
  return true;
}

}  // namespace gpuenv::sys
