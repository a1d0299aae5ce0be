// Fuzz target of the bootstrap store's request parser (src/bootstrap/
// store_frames.h) and of a live server fed the same kind of bytes.
//
// One oracle, two drivers:
// - main(): the bounded random driver that meson runs (suite 'fuzz', and the
//   default run). It spends XC_TEST_FUZZ_SECONDS (default 20) in all: 40% on
//   the parser alone, 60% on a live StoreServer over Unix sockets. The seed
//   is random unless XC_TEST_FUZZ_SEED gives it; it is printed first, so a
//   failure can be replayed.
// - LLVMFuzzerTestOneInput(): libFuzzer's entry for open-ended runs of the
//   parser (the server half is left out). With clang:
//     clang++ -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined
//       -DXC_FUZZ_LIBFUZZER -Iinclude -Isrc tests/fuzz/fuzz_store.cc
//       src/bootstrap/store_frames.cc -o fuzz_store && ./fuzz_store
//
// What is checked, for random bytes and for valid frames mutated (bit
// flips, bytes set, length fields set to edge values, truncation, splices):
// - the stream gives the same events whether the bytes arrive in one piece
//   or cut at random points (so the server's answer cannot depend on how TCP
//   cuts a request);
// - a frame that decodes encodes back to exactly its bytes, and its fields
//   lie inside it;
// - what a stream holds stays within its bounds: a HELLO before the token,
//   the budget (or one small frame) after it, nothing once released;
// - the live server never crashes, answers only well-formed frames, keeps
//   answering a rank with the token within 5 s, keeps at most
//   max_pending connections without the token, keeps its partial requests
//   within the budget, and its process memory within a bound.
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bootstrap/store_frames.h"
#include "bootstrap/store_wire.h"
#ifndef XC_FUZZ_LIBFUZZER
#include "bootstrap/store.h"
#endif

namespace {

using namespace xc::bootstrap;
using wire::RequestStream;
using Rng = std::mt19937_64;
using Clock = std::chrono::steady_clock;

const char kToken[] = "fuzzfuzzfuzzfuzzfuzzfuzzfuzzfuzz";

[[noreturn]] void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "fuzz_store: FAILED: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  abort();
}
#define CHECK(cond, ...)            \
  do {                              \
    if (!(cond)) die(__VA_ARGS__);  \
  } while (0)

size_t pick(Rng &rng, size_t n) { return n ? static_cast<size_t>(rng() % n) : 0; }
bool chance(Rng &rng, int percent) { return static_cast<int>(rng() % 100) < percent; }

std::string random_bytes(Rng &rng, size_t n) {
  std::string s(n, '\0');
  for (char &c : s) c = static_cast<char>(rng());
  return s;
}

// A request that parses, of any type, with fields around their bounds now
// and then. Keys come mostly from a small pool so a live server's store
// stays small.
std::string valid_request(Rng &rng, bool hello_first_ok = true) {
  static const char *kKeys[] = {"", "a", "init/0", "init/all", "x/y/z", "count", "topo/0", "big"};
  auto key = [&rng]() -> std::string {
    if (chance(rng, 3)) return std::string(kMaxKeyBytes, 'k');
    if (chance(rng, 5)) return random_bytes(rng, pick(rng, 40));
    return kKeys[pick(rng, sizeof kKeys / sizeof kKeys[0])];
  };
  auto value_len = [&rng]() -> size_t {
    int r = static_cast<int>(pick(rng, 1000));
    if (r < 900) return pick(rng, 200);
    if (r < 990) return pick(rng, 80 << 10);  // around kSmallFrame
    return (1u << 20) - 64 + pick(rng, 128);  // around the live server's max_value
  };
  std::string key_text, value_text, token_text;
  std::vector<std::string> key_texts;
  wire::Request q;
  switch (pick(rng, hello_first_ok ? 6 : 5)) {
    case 0:
      q.type = wire::kSet;
      key_text = key();
      value_text = std::string(value_len(), static_cast<char>('a' + pick(rng, 26)));
      q.key = key_text;
      q.value = value_text;
      break;
    case 1:
      q.type = wire::kGet;
      key_text = key();
      q.key = key_text;
      break;
    case 2:
      q.type = wire::kAdd;
      key_text = key();
      q.key = key_text;
      q.delta = chance(rng, 10) ? INT64_MAX : static_cast<int64_t>(pick(rng, 7)) - 3;
      break;
    case 3:
      q.type = wire::kCheck;
      for (size_t i = 0, n = pick(rng, 9); i < n; ++i) key_texts.push_back(key());
      for (const std::string &k : key_texts) q.keys.push_back(k);
      break;
    case 4:
      q.type = wire::kCancel;
      break;
    default:
      q.type = wire::kHello;
      q.version = chance(rng, 90) ? wire::kVersion : static_cast<uint32_t>(rng());
      token_text = chance(rng, 80) ? kToken : random_bytes(rng, pick(rng, 40));
      q.token = token_text;
      break;
  }
  return wire::encode_request(q);
}

std::string hello(const char *token = kToken) {
  wire::Request q;
  q.type = wire::kHello;
  q.version = wire::kVersion;
  q.token = token;
  return wire::encode_request(q);
}

void set_u32(std::string *s, size_t at, uint32_t v) {
  if (at + 4 > s->size()) return;
  for (int i = 0; i < 4; ++i) (*s)[at + i] = static_cast<char>(v >> (8 * i));
}

// Valid frames, mutated a little (or not at all), or plain noise.
std::string fuzz_input(Rng &rng) {
  if (chance(rng, 10)) return random_bytes(rng, pick(rng, 300));
  std::string s;
  if (chance(rng, 70)) s = hello();
  for (size_t i = 0, n = 1 + pick(rng, 6); i < n; ++i) s += valid_request(rng);
  for (size_t m = 0, n = pick(rng, 4); m < n && !s.empty(); ++m) {
    switch (pick(rng, 7)) {
      case 0: s[pick(rng, s.size())] ^= static_cast<char>(1u << pick(rng, 8)); break;
      case 1: s[pick(rng, s.size())] = static_cast<char>(rng()); break;
      case 2: {  // a length field (or any 4 bytes) set to an edge value
        static const uint32_t kEdges[] = {0,
                                          1,
                                          4,
                                          5,
                                          static_cast<uint32_t>(wire::max_payload(wire::kHello)),
                                          static_cast<uint32_t>(wire::max_payload(wire::kHello) + 1),
                                          static_cast<uint32_t>(kMaxKeyBytes),
                                          static_cast<uint32_t>(kMaxKeyBytes + 1),
                                          static_cast<uint32_t>(wire::kSmallFrame),
                                          static_cast<uint32_t>(wire::max_payload(wire::kSet)),
                                          static_cast<uint32_t>(wire::max_payload(wire::kSet) + 1),
                                          0x7fffffffu,
                                          0xffffffffu};
        set_u32(&s, pick(rng, s.size()), kEdges[pick(rng, sizeof kEdges / sizeof kEdges[0])]);
        break;
      }
      case 3: s.resize(pick(rng, s.size())); break;
      case 4: s.insert(pick(rng, s.size() + 1), random_bytes(rng, 1 + pick(rng, 16))); break;
      case 5: {
        size_t from = pick(rng, s.size()), len = pick(rng, s.size() - from + 1);
        s.insert(pick(rng, s.size() + 1), s.substr(from, len));
        break;
      }
      default: s[pick(rng, std::min<size_t>(s.size(), 5))] = static_cast<char>(pick(rng, 80)); break;  // a header byte
    }
  }
  return s;
}

// How often each event came up (printed, to show what a run covered).
uint64_t g_events[6];
uint64_t g_decoded, g_answers[8];

struct Seen {
  RequestStream::Event event;
  uint8_t type;
  uint32_t len;
  std::string payload;
  bool operator==(const Seen &o) const {
    return event == o.event && type == o.type && len == o.len && payload == o.payload;
  }
};

// Feeds input to a fresh stream in pieces cut by `cuts` (empty: one piece),
// acting as the server does: the token authenticates, a finished stream
// ends. Checks what the stream holds after every call.
std::vector<Seen> run_stream(const std::string &input, const std::vector<size_t> &cuts, size_t max_value,
                             size_t budget_limit) {
  wire::Budget budget;
  budget.limit = budget_limit;
  std::vector<Seen> seen;
  {
    RequestStream in(&budget, max_value);
    bool authed = false, finished = false;
    size_t at = 0, piece = 0;
    while (at < input.size() && !finished) {
      size_t n = piece < cuts.size() ? std::min(cuts[piece], input.size() - at) : input.size() - at;
      ++piece;
      const char *p = input.data() + at;
      const char *const end = p + n;
      at += n;
      size_t left = n;
      while (!finished) {
        RequestStream::Item it = in.next(&p, &left, authed);
        CHECK(p + left == end && left <= n, "the stream moved its window wrongly");
        CHECK(budget.used == in.held(), "budget %zu != held %zu", budget.used, in.held());
        if (!authed) {
          CHECK(in.held() <= wire::kMaxHelloFrame, "holds %zu bytes before the token", in.held());
        } else {
          CHECK(in.held() <= std::max(budget_limit, wire::kSmallFrame + wire::kHeaderBytes),
                "holds %zu bytes over a budget of %zu", in.held(), budget_limit);
        }
        ++g_events[static_cast<int>(it.event)];
        Seen s{it.event, it.type, it.len, {}};
        if (it.event == RequestStream::Event::kNeedMore) {
          CHECK(left == 0, "needs more with %zu bytes in its window", left);
          break;
        }
        if (it.event == RequestStream::Event::kFrame) {
          s.payload.assign(it.payload, it.len);
          wire::Request q;
          if (wire::decode_request(it.type, it.payload, it.len, &q)) {
            ++g_decoded;
            std::string frame = wire::encode_request(q);
            CHECK(frame.size() == wire::kHeaderBytes + it.len &&
                      memcmp(frame.data() + wire::kHeaderBytes, it.payload, it.len) == 0 &&
                      static_cast<uint8_t>(frame[4]) == it.type,
                  "a frame of type %u and %u bytes does not encode back to itself", it.type, it.len);
            auto inside = [&](std::string_view v) {
              return v.empty() || (v.data() >= it.payload && v.data() + v.size() <= it.payload + it.len);
            };
            CHECK(inside(q.token) && inside(q.key) && inside(q.value), "a decoded field lies outside its frame");
            for (std::string_view k : q.keys) CHECK(inside(k), "a CHECK key lies outside its frame");
            CHECK(q.key.size() <= kMaxKeyBytes && q.value.size() <= kMaxValueBytes &&
                      q.token.size() <= wire::kMaxTokenBytes && q.keys.size() <= wire::kMaxCheckKeys,
                  "a decoded field is over its bound");
            if (it.type == wire::kHello && !authed && q.version == wire::kVersion && q.token == kToken)
              authed = true;
            else if (it.type == wire::kHello)
              finished = true;  // the server closes after an ERROR or REFUSED
          } else {
            finished = true;  // the server drops the connection
          }
        } else if (it.event == RequestStream::Event::kNotHello || it.event == RequestStream::Event::kMalformed) {
          finished = true;
        } else {
          CHECK(authed, "a refusal before the token");
        }
        seen.push_back(std::move(s));
      }
    }
    in.release();
    CHECK(budget.used == 0 && in.held() == 0, "%zu bytes held after release", budget.used);
  }
  return seen;
}

// The parser oracle on one input, with cuts from rng.
void check_parser(const std::string &input, Rng &rng) {
  static const size_t kMaxValues[] = {kMaxValueBytes, 1u << 20, 1024};
  static const size_t kBudgets[] = {SIZE_MAX, size_t{128} << 20, 1u << 20, 100 << 10};
  size_t max_value = kMaxValues[pick(rng, 3)];
  size_t budget = kBudgets[pick(rng, 4)];
  std::vector<Seen> whole = run_stream(input, {}, max_value, budget);
  std::vector<size_t> cuts;
  for (size_t at = 0; at < input.size();) {
    size_t n = chance(rng, 30) ? 1 : 1 + pick(rng, chance(rng, 50) ? 8 : input.size());
    cuts.push_back(n);
    at += n;
  }
  std::vector<Seen> cut = run_stream(input, cuts, max_value, budget);
  // A refusal for the budget depends on how much had arrived: allowed to
  // differ from there on, never before.
  size_t same = 0;
  while (same < whole.size() && same < cut.size() && whole[same] == cut[same]) ++same;
  bool budget_diff = (same < whole.size() && whole[same].event == RequestStream::Event::kOverBudget) ||
                     (same < cut.size() && cut[same].event == RequestStream::Event::kOverBudget);
  CHECK((same == whole.size() && same == cut.size()) || budget_diff,
        "%zu bytes in one piece give %zu events, cut in %zu pieces %zu; they differ at event %zu", input.size(),
        whole.size(), cuts.size(), cut.size(), same);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint64_t seed = 0;
  for (size_t i = 0; i < size && i < 8; ++i) seed = seed << 8 | data[i];
  Rng rng(seed);
  check_parser(std::string(reinterpret_cast<const char *>(data), size), rng);
  return 0;
}

#ifndef XC_FUZZ_LIBFUZZER

namespace {

long rss_mib() {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  long kib = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
  fclose(f);
  return kib / 1024;
}

int unix_connect(const std::string &path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  CHECK(fd >= 0, "socket: %s", strerror(errno));
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  memcpy(a.sun_path, path.c_str(), path.size() + 1);
  // A Unix listener with a full backlog answers EAGAIN: wait for the server.
  for (int tries = 0; connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0; ++tries) {
    CHECK((errno == EAGAIN || errno == EINTR) && tries < 5000, "connect: %s", strerror(errno));
    poll(nullptr, 0, 1);
  }
  return fd;
}

// A peer of the live server: what it sent and what came back.
struct Peer {
  int fd = -1;
  std::string answers;  // the first 64 KiB the server sent
  bool closed = false;
};

void drain(Peer &p) {
  char buf[16384];
  while (!p.closed) {
    ssize_t r = recv(p.fd, buf, sizeof buf, MSG_DONTWAIT);
    if (r > 0) {
      if (p.answers.size() < (64u << 10)) p.answers.append(buf, static_cast<size_t>(r));
      continue;
    }
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) p.closed = true;
    if (r < 0 && errno == EINTR) continue;
    break;
  }
}

// Every whole frame the server sent is an answer type within its bound.
void check_answers(const Peer &p) {
  size_t at = 0;
  while (at + wire::kHeaderBytes <= p.answers.size()) {
    uint32_t len = wire::get_u32(p.answers.data() + at);
    uint8_t type = static_cast<uint8_t>(p.answers[at + 4]);
    CHECK(type >= wire::kOk && type <= wire::kError && len <= wire::max_payload(type),
          "the server sent a frame of type %u and %u bytes", type, len);
    ++g_answers[type - wire::kOk];
    at += wire::kHeaderBytes + len;
  }
}

// Sends input in random pieces without ever blocking on a server that has
// stopped reading (it may be skipping, pausing, or about to drop us).
void send_some(Peer &p, const std::string &input, Rng &rng) {
  size_t at = 0;
  int stuck = 0;
  while (at < input.size() && !p.closed) {
    size_t n = std::min(input.size() - at, 1 + pick(rng, chance(rng, 50) ? 16 : input.size()));
    ssize_t w = send(p.fd, input.data() + at, n, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (w > 0) {
      at += static_cast<size_t>(w);
      continue;
    }
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      drain(p);
      if (++stuck > 20) return;
      pollfd q{p.fd, POLLOUT, 0};
      poll(&q, 1, 5);
      continue;
    }
    p.closed = true;
  }
  drain(p);
}

// Reads one answer frame within the deadline; false on timeout or close.
bool read_answer(int fd, Clock::time_point until, uint8_t *type, std::string *payload) {
  std::string got;
  for (;;) {
    if (got.size() >= wire::kHeaderBytes) {
      size_t total = wire::kHeaderBytes + wire::get_u32(got.data());
      if (got.size() >= total) {
        *type = static_cast<uint8_t>(got[4]);
        payload->assign(got, wire::kHeaderBytes, total - wire::kHeaderBytes);
        return true;
      }
    }
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count());
    if (left <= 0) return false;
    pollfd q{fd, POLLIN, 0};
    if (poll(&q, 1, left) <= 0) continue;
    char buf[4096];
    ssize_t r = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (r == 0) return false;
    if (r > 0) got.append(buf, static_cast<size_t>(r));
  }
}

bool send_all(int fd, const std::string &s, Clock::time_point until) {
  size_t at = 0;
  while (at < s.size()) {
    ssize_t w = send(fd, s.data() + at, s.size() - at, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (w > 0) {
      at += static_cast<size_t>(w);
      continue;
    }
    if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count());
    if (left <= 0) return false;
    pollfd q{fd, POLLOUT, 0};
    poll(&q, 1, left);
  }
  return true;
}

// A rank with the token: HELLO, SET, GET within 5 s, or the server hangs.
void check_still_serving(const std::string &path, uint64_t round) {
  auto until = Clock::now() + std::chrono::seconds(5);
  int fd = unix_connect(path);
  std::string key = "sanity/" + std::to_string(round), value = "v" + std::to_string(round * 7919);
  wire::Request set, get;
  set.type = wire::kSet;
  set.key = key;
  set.value = value;
  get.type = wire::kGet;
  get.key = key;
  uint8_t type = 0;
  std::string payload;
  CHECK(send_all(fd, hello(), until) && read_answer(fd, until, &type, &payload) && type == wire::kOk,
        "round %" PRIu64 ": the server did not take the token within 5 s (answer type %u)", round, type);
  CHECK(send_all(fd, wire::encode_request(set), until) && read_answer(fd, until, &type, &payload) &&
            type == wire::kOk,
        "round %" PRIu64 ": the server did not answer a SET within 5 s (answer type %u)", round, type);
  CHECK(send_all(fd, wire::encode_request(get), until) && read_answer(fd, until, &type, &payload) &&
            type == wire::kValue && payload.size() == 4 + value.size() && payload.substr(4) == value,
        "round %" PRIu64 ": the server did not answer a GET rightly within 5 s (answer type %u)", round, type);
  close(fd);
}

void fuzz_server(Rng &rng, double seconds) {
  char dir_template[] = "/tmp/xc-fuzz-store-XXXXXX";
  CHECK(mkdtemp(dir_template) != nullptr, "mkdtemp: %s", strerror(errno));
  std::string path = std::string(dir_template) + "/store";
  int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  memcpy(a.sun_path, path.c_str(), path.size() + 1);
  CHECK(lfd >= 0 && bind(lfd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0, "bind %s: %s", path.c_str(),
        strerror(errno));
  StoreLimits limits;
  limits.handshake_ms = 200;
  limits.max_pending = 8;
  limits.max_value = 1u << 20;
  limits.max_inflight = 3u << 19;  // one value of max_value and a half
  std::unique_ptr<StoreServer> server;
  xc::Status st = StoreServer::start("", 0, lfd, kToken, limits, &server);
  CHECK(st.ok(), "cannot start the server: %s", st.message().c_str());

  const long rss0 = rss_mib();
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  std::vector<Peer> open;  // some peers stay connected a while
  uint64_t rounds = 0, peers = 0;
  size_t max_pending_seen = 0, max_buffered_seen = 0;
  while (Clock::now() < end) {
    ++rounds;
    for (size_t i = 0, n = 1 + pick(rng, 4); i < n; ++i) {
      Peer p;
      p.fd = unix_connect(path);
      ++peers;
      send_some(p, fuzz_input(rng), rng);
      if (chance(rng, 20) && open.size() < 48) {
        open.push_back(std::move(p));
      } else {
        check_answers(p);
        close(p.fd);
      }
    }
    for (Peer &p : open) drain(p);
    while (open.size() > 32 || (!open.empty() && chance(rng, 10))) {
      size_t i = pick(rng, open.size());
      check_answers(open[i]);
      close(open[i].fd);
      open.erase(open.begin() + static_cast<long>(i));
    }
    StoreStats s = server->stats();
    max_pending_seen = std::max(max_pending_seen, s.pending);
    max_buffered_seen = std::max(max_buffered_seen, s.buffered);
    CHECK(s.pending <= limits.max_pending, "%zu connections without the token (limit %zu)", s.pending,
          limits.max_pending);
    CHECK(s.buffered <= limits.max_inflight + s.connections * (wire::kSmallFrame + wire::kHeaderBytes),
          "%zu bytes of partial requests over %zu connections (budget %zu)", s.buffered, s.connections,
          limits.max_inflight);
    if (rounds % 50 == 0) {
      check_still_serving(path, rounds);
      long grown = rss_mib() - rss0;
      CHECK(grown < 256, "the process grew by %ld MiB", grown);
    }
  }
  check_still_serving(path, rounds);
  for (Peer &p : open) close(p.fd);
  // Every peer gone: nothing may be left counted or held.
  StoreStats s;
  for (auto until = Clock::now() + std::chrono::seconds(5); Clock::now() < until; poll(nullptr, 0, 5)) {
    s = server->stats();
    if (s.connections == 0) break;
  }
  CHECK(s.connections == 0 && s.pending == 0 && s.buffered == 0,
        "with every peer gone the server still counts %zu connections, %zu pending, %zu bytes buffered",
        s.connections, s.pending, s.buffered);
  auto t0 = Clock::now();
  server.reset();
  double stop_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  CHECK(stop_ms < 2000, "the server took %.0f ms to stop", stop_ms);
  unlink(path.c_str());
  rmdir(dir_template);
  printf("server: %" PRIu64 " rounds, %" PRIu64 " peers, %" PRIu64
         " dropped without the token; at most %zu pending and %zu bytes of partial requests; peak %zu; RSS +%ld "
         "MiB\n",
         rounds, peers, s.dropped_pending, max_pending_seen, max_buffered_seen, s.peak_buffered, rss_mib() - rss0);
  printf("server answers seen: OK %" PRIu64 ", REFUSED %" PRIu64 ", VALUE %" PRIu64 ", INT %" PRIu64
         ", PRESENT %" PRIu64 ", CANCELLED %" PRIu64 ", ERROR %" PRIu64 "\n",
         g_answers[0], g_answers[1], g_answers[2], g_answers[3], g_answers[4], g_answers[5], g_answers[6]);
}

}  // namespace

int main() {
  double seconds = 20;
  if (const char *e = getenv("XC_TEST_FUZZ_SECONDS")) seconds = atof(e);
  uint64_t seed = std::random_device{}() ^ static_cast<uint64_t>(Clock::now().time_since_epoch().count());
  if (const char *e = getenv("XC_TEST_FUZZ_SEED")) seed = strtoull(e, nullptr, 0);
  printf("fuzz_store: seed %" PRIu64 " (XC_TEST_FUZZ_SEED replays it), %.1f s\n", seed, seconds);
  fflush(stdout);
  Rng rng(seed);

  const auto parser_end = Clock::now() + std::chrono::duration<double>(seconds * 0.4);
  uint64_t inputs = 0;
  while (Clock::now() < parser_end) {
    for (int i = 0; i < 64; ++i, ++inputs) {
      std::string input = fuzz_input(rng);
      check_parser(input, rng);
      // The libFuzzer entry too, on the same bytes.
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(input.data()), input.size());
    }
  }
  printf("parser: %" PRIu64 " inputs; events: need-more %" PRIu64 ", frame %" PRIu64 " (%" PRIu64
         " decoded), not-hello %" PRIu64 ", malformed %" PRIu64 ", too-large %" PRIu64 ", over-budget %" PRIu64 "\n",
         inputs, g_events[0], g_events[1], g_decoded, g_events[2], g_events[3], g_events[4], g_events[5]);
  fflush(stdout);
  fuzz_server(rng, seconds * 0.6);
  return 0;
}

#endif  // XC_FUZZ_LIBFUZZER
