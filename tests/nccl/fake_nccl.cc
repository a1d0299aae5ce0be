// A fake libnccl for the `nccl` suite (CI has no GPU and no NCCL): the
// entry points xcomm's loader resolves (src/transport/nccl/nccl_api.h),
// moving data correctly between the ranks' processes so that tests check
// real results, and recording every call.
//
// Data moves through files in FAKE_NCCL_DIR (a tmpfs directory the test
// makes): one directory per communicator, named by the unique id and the
// split lineage ("c<hash of id>/s<split>c<color>"). A collective is op
// number seq on its communicator: each rank publishes its input as
// <seq>.<rank> (written, then renamed), waits for everyone's, computes its
// own output from them in rank order, and marks <seq>.<rank>.done; the
// files of an op are removed once every rank has passed it. A send is
// p2p.<src>.<dst>.<k> (k-th message of that pair), removed by its receiver.
// Every op of a communicator runs in order on its own thread; in non-blocking
// mode (config.blocking = 0, as xcomm asks) calls return ncclInProgress and
// ncclCommGetAsyncError says ncclInProgress until the queued work is done.
//
// Environment:
//   FAKE_NCCL_DIR      exchange directory (required)
//   FAKE_NCCL_LOG      log prefix: this process writes <prefix>.<XC_RANK>
//   FAKE_NCCL_VERSION  ncclGetVersion's code (default 22809, 2.28.9)
//   FAKE_NCCL_FAIL     <call>:<n>:<how> — the n-th call of <call> in this
//                      process (ncclAllReduce, ncclSend, ...): how = ret
//                      (returns ncclSystemError), async (the op fails later:
//                      ncclCommGetAsyncError says ncclSystemError) or hang
//                      (never completes; only ncclCommAbort ends it)
//
// Log lines (one per call, "key=value" words): init, uniqueid, split,
// coll (op=...), send, recv, group_end, abort, finalize, destroy, asyncerror.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

enum Result : int {
  kSuccess = 0,
  kSystemError = 2,
  kInternalError = 3,
  kInvalidArgument = 4,
  kInvalidUsage = 5,
  kRemoteError = 6,
  kInProgress = 7
};

struct UniqueId {
  char internal[128];
};

struct Config {
  size_t size;
  unsigned magic;
  unsigned version;
  int blocking;
  // the rest is not read
};

std::mutex g_log_mu;
std::string g_last_error;

void logf(const char *fmt, ...) {
  const char *prefix = getenv("FAKE_NCCL_LOG");
  if (!prefix) return;
  const char *rank = getenv("XC_RANK");
  std::string path = std::string(prefix) + "." + (rank ? rank : std::to_string(getpid()));
  std::lock_guard<std::mutex> g(g_log_mu);
  FILE *f = fopen(path.c_str(), "a");
  if (!f) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(f, fmt, ap);
  va_end(ap);
  fputc('\n', f);
  fclose(f);
}

// FAKE_NCCL_FAIL for the call named `call`: "", "ret", "async" or "hang".
std::string injected(const char *call) {
  static std::mutex mu;
  static std::map<std::string, int> counts;
  const char *spec = getenv("FAKE_NCCL_FAIL");
  if (!spec) return "";
  std::string s(spec);
  size_t a = s.find(':'), b = s.find(':', a == std::string::npos ? a : a + 1);
  if (a == std::string::npos || b == std::string::npos) return "";
  if (s.substr(0, a) != call) return "";
  int n = atoi(s.substr(a + 1, b - a - 1).c_str());
  std::lock_guard<std::mutex> g(mu);
  return ++counts[call] == n ? s.substr(b + 1) : "";
}

size_t dtype_size(int t) {
  switch (t) {
    case 0:
    case 1:
      return 1;
    case 2:
    case 3:
      return 4;
    case 4:
    case 5:
      return 8;
    case 6:
    case 9:
      return 2;
    case 7:
      return 4;
    case 8:
      return 8;
    default:
      return 0;
  }
}

template <typename T>
void reduce_typed(T *acc, const T *in, size_t n, int op) {
  for (size_t i = 0; i < n; ++i) {
    switch (op) {
      case 0:
      case 4:
        acc[i] = static_cast<T>(acc[i] + in[i]);
        break;
      case 1:
        acc[i] = static_cast<T>(acc[i] * in[i]);
        break;
      case 2:
        acc[i] = in[i] > acc[i] ? in[i] : acc[i];
        break;
      case 3:
        acc[i] = in[i] < acc[i] ? in[i] : acc[i];
        break;
    }
  }
}

template <typename T>
void divide_typed(T *acc, size_t n, int by) {
  for (size_t i = 0; i < n; ++i) acc[i] = static_cast<T>(acc[i] / static_cast<T>(by));
}

// float16 / bfloat16: accumulated in float, rounded once at the end (as
// NCCL and xcomm do), so the fake keeps float accumulators for them.
float half_to_float(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ffu, bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal
      exp = 127 - 15 + 1;
      while (!(man & 0x400u)) {
        man <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((man & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_half(float f) {  // round to nearest even; the tests' values are small integers
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  int exp = static_cast<int>((x >> 23) & 0xff) - 127 + 15;
  uint32_t man = x & 0x7fffffu;
  if (exp <= 0) return static_cast<uint16_t>(sign);  // underflow to zero (not met by the tests)
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  uint32_t h = sign | (static_cast<uint32_t>(exp) << 10) | (man >> 13);
  uint32_t rest = man & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(h);
}

float bf16_to_float(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

// Reduce n 16-bit floats from each rank's block (rank order) into out.
void reduce_half(bool bf16, const std::vector<std::vector<char>> &all, size_t off, size_t n, int op, void *out) {
  std::vector<float> acc(n);
  for (size_t p = 0; p < all.size(); ++p) {
    const uint16_t *in = reinterpret_cast<const uint16_t *>(all[p].data() + off);
    for (size_t i = 0; i < n; ++i) {
      float v = bf16 ? bf16_to_float(in[i]) : half_to_float(in[i]);
      if (p == 0) {
        acc[i] = v;
        continue;
      }
      switch (op) {
        case 0:
        case 4:
          acc[i] += v;
          break;
        case 1:
          acc[i] *= v;
          break;
        case 2:
          acc[i] = v > acc[i] ? v : acc[i];
          break;
        case 3:
          acc[i] = v < acc[i] ? v : acc[i];
          break;
      }
    }
  }
  uint16_t *o = static_cast<uint16_t *>(out);
  for (size_t i = 0; i < n; ++i) {
    float v = op == 4 ? acc[i] / static_cast<float>(all.size()) : acc[i];
    o[i] = bf16 ? float_to_bf16(v) : float_to_half(v);
  }
}

// acc op= in, element-wise; false for dtypes the fake does not reduce.
bool reduce(void *acc, const void *in, size_t n, int dtype, int op) {
  switch (dtype) {
    case 0:
      reduce_typed(static_cast<int8_t *>(acc), static_cast<const int8_t *>(in), n, op);
      return true;
    case 1:
      reduce_typed(static_cast<uint8_t *>(acc), static_cast<const uint8_t *>(in), n, op);
      return true;
    case 2:
      reduce_typed(static_cast<int32_t *>(acc), static_cast<const int32_t *>(in), n, op);
      return true;
    case 3:
      reduce_typed(static_cast<uint32_t *>(acc), static_cast<const uint32_t *>(in), n, op);
      return true;
    case 4:
      reduce_typed(static_cast<int64_t *>(acc), static_cast<const int64_t *>(in), n, op);
      return true;
    case 5:
      reduce_typed(static_cast<uint64_t *>(acc), static_cast<const uint64_t *>(in), n, op);
      return true;
    case 7:
      reduce_typed(static_cast<float *>(acc), static_cast<const float *>(in), n, op);
      return true;
    case 8:
      reduce_typed(static_cast<double *>(acc), static_cast<const double *>(in), n, op);
      return true;
    default:
      return false;
  }
}

void divide(void *acc, size_t n, int dtype, int by) {
  switch (dtype) {
    case 0:
      divide_typed(static_cast<int8_t *>(acc), n, by);
      break;
    case 1:
      divide_typed(static_cast<uint8_t *>(acc), n, by);
      break;
    case 2:
      divide_typed(static_cast<int32_t *>(acc), n, by);
      break;
    case 3:
      divide_typed(static_cast<uint32_t *>(acc), n, by);
      break;
    case 4:
      divide_typed(static_cast<int64_t *>(acc), n, by);
      break;
    case 5:
      divide_typed(static_cast<uint64_t *>(acc), n, by);
      break;
    case 7:
      divide_typed(static_cast<float *>(acc), n, by);
      break;
    case 8:
      divide_typed(static_cast<double *>(acc), n, by);
      break;
  }
}

bool exists(const std::string &p) { return access(p.c_str(), F_OK) == 0; }

bool write_file(const std::string &path, const void *data, size_t bytes) {
  std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
  if (fd < 0) return false;
  const char *p = static_cast<const char *>(data);
  size_t left = bytes;
  while (left) {
    ssize_t w = write(fd, p, left);
    if (w <= 0) {
      close(fd);
      return false;
    }
    p += w;
    left -= static_cast<size_t>(w);
  }
  close(fd);
  return rename(tmp.c_str(), path.c_str()) == 0;
}

bool read_file(const std::string &path, std::vector<char> *out) {
  FILE *f = fopen(path.c_str(), "rb");
  if (!f) return false;
  out->clear();
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out->insert(out->end(), buf, buf + n);
  fclose(f);
  return true;
}

}  // namespace

struct ncclComm {
  std::string name;
  std::string dir;
  int nranks = 0, rank = 0;
  bool blocking = true;
  uint64_t seq = 0;                        // collectives started (the worker's)
  int splits = 0;                          // splits of this communicator (callers' order)
  std::map<int, uint64_t> sent, received;  // messages per peer (the worker's)
  std::atomic<int> async{kSuccess};
  std::atomic<int> ready_polls{0};  // ncclInProgress answers left before ready (non-blocking init)
  std::atomic<bool> ready{true};    // a split child: made when its parent's worker ran the split
  std::atomic<bool> aborted{false};
  std::string last_error;

  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<int()>> work;
  int busy = 0;
  bool stop = false;
  std::thread thread;

  void start() {
    thread = std::thread([this] { run(); });
  }
  void run() {
    std::unique_lock<std::mutex> lk(mu);
    for (;;) {
      cv.wait(lk, [this] { return stop || !work.empty(); });
      if (work.empty()) return;
      auto fn = std::move(work.front());
      work.pop_front();
      lk.unlock();
      int r = async.load() == kSuccess ? fn() : async.load();
      lk.lock();
      --busy;
      if (r != kSuccess) {
        int none = kSuccess;
        async.compare_exchange_strong(none, r);
        logf("asyncerror comm=%s result=%d", name.c_str(), r);
      }
      cv.notify_all();
    }
  }
  // Queue fn; in blocking mode wait for it.
  int submit(std::function<int()> fn) {
    {
      std::lock_guard<std::mutex> g(mu);
      work.push_back(std::move(fn));
      ++busy;
    }
    cv.notify_all();
    if (!blocking) return kInProgress;
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [this] { return busy == 0; });
    return async.load();
  }
  bool idle() {
    std::lock_guard<std::mutex> g(mu);
    return busy == 0;
  }
  void shutdown() {
    {
      std::lock_guard<std::mutex> g(mu);
      stop = true;
      work.clear();
    }
    cv.notify_all();
    if (thread.joinable()) thread.join();
  }

  std::string file(uint64_t s, int r) const { return dir + "/" + std::to_string(s) + "." + std::to_string(r); }

  // Wait for path; kRemoteError when a member aborted, -1 when we were aborted.
  int wait_for(const std::string &path) {
    for (int i = 0;; ++i) {
      if (exists(path)) return kSuccess;
      if (aborted.load()) return kInternalError;
      if (i % 64 == 0)
        for (int p = 0; p < nranks; ++p)
          if (p != rank && exists(dir + "/aborted." + std::to_string(p))) {
            last_error = "fake NCCL: rank " + std::to_string(p) + " of " + name + " aborted";
            return kRemoteError;
          }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  // One collective step: publish mine, gather everyone's (in rank order).
  int exchange(const void *mine, size_t bytes, std::vector<std::vector<char>> *all, const std::string &inject) {
    uint64_t s = ++seq;
    if (inject == "hang") {
      while (!aborted.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return kInternalError;
    }
    if (inject == "async") {
      last_error = "fake NCCL: injected asynchronous error";
      return kSystemError;
    }
    if (!write_file(file(s, rank), mine, bytes)) return kSystemError;
    all->assign(static_cast<size_t>(nranks), {});
    for (int p = 0; p < nranks; ++p) {
      int r = wait_for(file(s, p));
      if (r != kSuccess) return r;
      if (!read_file(file(s, p), &(*all)[static_cast<size_t>(p)])) return kSystemError;
    }
    // Everyone read everything: mark, wait for the marks, clean up behind.
    std::string done = file(s, rank) + ".done";
    if (!write_file(done, "", 0)) return kSystemError;
    for (int p = 0; p < nranks; ++p) {
      int r = wait_for(file(s, p) + ".done");
      if (r != kSuccess) return r;
    }
    unlink(file(s, rank).c_str());
    if (s > 1) unlink((file(s - 1, rank) + ".done").c_str());
    return kSuccess;
  }
};

namespace {

struct P2p {
  bool send;
  void *buf;
  size_t count;
  int dtype;
  int peer;
  ncclComm *comm;
  void *stream;
};
thread_local int t_group_depth = 0;
thread_local std::vector<P2p> t_group;

int run_p2p(ncclComm *c, std::vector<P2p> ops, const std::string &inject) {
  if (inject == "hang") {
    while (!c->aborted.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return kInternalError;
  }
  if (inject == "async") {
    c->last_error = "fake NCCL: injected asynchronous error";
    return kSystemError;
  }
  for (const P2p &op : ops) {
    if (!op.send) continue;
    uint64_t k = ++c->sent[op.peer];
    std::string path =
        c->dir + "/p2p." + std::to_string(c->rank) + "." + std::to_string(op.peer) + "." + std::to_string(k);
    if (!write_file(path, op.buf, op.count * dtype_size(op.dtype))) return kSystemError;
  }
  for (const P2p &op : ops) {
    if (op.send) continue;
    uint64_t k = ++c->received[op.peer];
    std::string path =
        c->dir + "/p2p." + std::to_string(op.peer) + "." + std::to_string(c->rank) + "." + std::to_string(k);
    int r = c->wait_for(path);
    if (r != kSuccess) return r;
    std::vector<char> data;
    if (!read_file(path, &data)) return kSystemError;
    unlink(path.c_str());
    size_t want = op.count * dtype_size(op.dtype);
    if (data.size() != want) {
      c->last_error =
          "fake NCCL: message of " + std::to_string(data.size()) + " bytes for a receive of " + std::to_string(want);
      return kInvalidUsage;
    }
    memcpy(op.buf, data.data(), want);
  }
  return kSuccess;
}

std::string hex_name(const UniqueId &id) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char ch : id.internal) {
    h ^= static_cast<unsigned char>(ch);
    h *= 0x100000001b3ULL;
  }
  char buf[32];
  snprintf(buf, sizeof buf, "c%016llx", static_cast<unsigned long long>(h));
  return buf;
}

int check_config(const Config *cfg, bool *blocking) {
  *blocking = true;
  if (!cfg) return kSuccess;
  if (cfg->magic != 0xcafebeef || cfg->size < 24 || cfg->version < 21400) return kInvalidArgument;
  if (cfg->blocking != INT_MIN) *blocking = cfg->blocking != 0;
  return kSuccess;
}

int start_op(ncclComm *c, const char *call, std::function<int(const std::string &)> body) {
  if (!c) return kInvalidArgument;
  if (c->aborted.load()) return kInvalidUsage;
  std::string inject = injected(call);
  if (inject == "ret") {
    c->last_error = std::string("fake NCCL: injected failure of ") + call;
    return kSystemError;
  }
  return c->submit([body, inject] { return body(inject); });
}

}  // namespace

extern "C" {

int ncclGroupEnd();

int ncclGetVersion(int *version) {
  const char *v = getenv("FAKE_NCCL_VERSION");
  *version = v ? atoi(v) : 22809;
  return kSuccess;
}

int ncclGetUniqueId(UniqueId *id) {
  int fd = open("/dev/urandom", O_RDONLY);
  if (fd < 0 || read(fd, id->internal, sizeof id->internal) != static_cast<ssize_t>(sizeof id->internal)) {
    if (fd >= 0) close(fd);
    return kSystemError;
  }
  close(fd);
  logf("uniqueid id=%s", hex_name(*id).c_str());
  return kSuccess;
}

const char *ncclGetErrorString(int r) {
  switch (r) {
    case kSuccess:
      return "no error";
    case kSystemError:
      return "unhandled system error (fake)";
    case kInternalError:
      return "internal error (fake)";
    case kInvalidArgument:
      return "invalid argument (fake)";
    case kInvalidUsage:
      return "invalid usage (fake)";
    case kRemoteError:
      return "remote process exited or there was a network error (fake)";
    case kInProgress:
      return "NCCL operation in progress";
    default:
      return "unknown result code (fake)";
  }
}

const char *ncclGetLastError(ncclComm *comm) {
  g_last_error = comm ? comm->last_error : "";
  return g_last_error.c_str();
}

int ncclCommInitRankConfig(ncclComm **out, int nranks, UniqueId id, int rank, Config *cfg) {
  const char *root = getenv("FAKE_NCCL_DIR");
  if (!root || !out || nranks < 1 || rank < 0 || rank >= nranks) return kInvalidArgument;
  bool blocking = true;
  int r = check_config(cfg, &blocking);
  logf("init comm=%s nranks=%d rank=%d blocking=%d config_size=%zu config_version=%u result=%d", hex_name(id).c_str(),
       nranks, rank, blocking ? 1 : 0, cfg ? cfg->size : 0, cfg ? cfg->version : 0, r);
  if (r != kSuccess) return r;
  if (injected("ncclCommInitRankConfig") == "ret") return kSystemError;
  auto *c = new ncclComm;
  c->name = hex_name(id);
  c->dir = std::string(root) + "/" + c->name;
  mkdir(c->dir.c_str(), 0700);
  c->nranks = nranks;
  c->rank = rank;
  c->blocking = blocking;
  c->ready_polls = blocking ? 0 : 3;  // the caller's polling loop is exercised
  c->start();
  *out = c;
  return blocking ? kSuccess : kInProgress;
}

int ncclCommSplit(ncclComm *comm, int color, int key, ncclComm **out, Config *cfg) {
  if (!comm || !out) return kInvalidArgument;
  bool blocking = true;
  int r = check_config(cfg, &blocking);
  if (r != kSuccess) return r;
  int index = comm->splits++;
  ncclComm *child = nullptr;
  if (color >= 0) {
    child = new ncclComm;
    child->blocking = blocking;
    child->ready = false;
    child->start();
  }
  *out = child;
  return start_op(comm, "ncclCommSplit", [comm, color, key, child, index, blocking](const std::string &inject) -> int {
    int32_t mine[2] = {color, key};
    std::vector<std::vector<char>> all;
    int r = comm->exchange(mine, sizeof mine, &all, inject);
    if (r != kSuccess) return r;
    std::vector<std::pair<int, int>> order;  // (key, parent rank) of my color
    for (int p = 0; p < comm->nranks; ++p) {
      int32_t rec[2];
      memcpy(rec, all[static_cast<size_t>(p)].data(), sizeof rec);
      if (color >= 0 && rec[0] == color) order.push_back({rec[1], p});
    }
    std::string cname = comm->name + "/s" + std::to_string(index) + "c" + std::to_string(color);
    if (child) {
      std::sort(order.begin(), order.end());
      child->nranks = static_cast<int>(order.size());
      for (size_t i = 0; i < order.size(); ++i)
        if (order[i].second == comm->rank) child->rank = static_cast<int>(i);
      child->name = cname;
      child->dir = comm->dir + "_s" + std::to_string(index) + "c" + std::to_string(color);
      mkdir(child->dir.c_str(), 0700);
      child->ready = true;
    }
    logf("split parent=%s index=%d color=%d key=%d child=%s nranks=%d rank=%d blocking=%d", comm->name.c_str(), index,
         color, key, child ? child->name.c_str() : "-", child ? child->nranks : 0, child ? child->rank : -1,
         blocking ? 1 : 0);
    return kSuccess;
  });
}

int ncclCommGetAsyncError(ncclComm *comm, int *result) {
  if (!comm || !result) return kInvalidArgument;
  int a = comm->async.load();
  if (a != kSuccess) {
    *result = a;
    return kSuccess;
  }
  if (comm->ready_polls.load() > 0) {
    comm->ready_polls.fetch_sub(1);
    *result = kInProgress;
    return kSuccess;
  }
  *result = (!comm->ready.load() || !comm->idle()) ? kInProgress : kSuccess;
  return kSuccess;
}

int ncclCommAbort(ncclComm *comm) {
  if (!comm) return kSuccess;
  logf("abort comm=%s", comm->name.c_str());
  comm->aborted = true;
  if (!comm->dir.empty()) write_file(comm->dir + "/aborted." + std::to_string(comm->rank), "", 0);
  comm->shutdown();
  delete comm;
  return kSuccess;
}

int ncclCommFinalize(ncclComm *comm) {
  if (!comm) return kInvalidArgument;
  logf("finalize comm=%s", comm->name.c_str());
  return comm->blocking ? kSuccess : kInProgress;  // "in progress" until the queue drains
}

int ncclCommDestroy(ncclComm *comm) {
  if (!comm) return kSuccess;
  logf("destroy comm=%s", comm->name.c_str());
  comm->shutdown();
  delete comm;
  return kSuccess;
}

static int coll(const char *call, const char *op, ncclComm *comm, const void *send, void *recv, size_t count, int dtype,
                int redop, int root, void *stream) {
  if (!comm) return kInvalidArgument;
  if (dtype_size(dtype) == 0) return kInvalidArgument;
  logf("coll op=%s comm=%s count=%zu dtype=%d redop=%d root=%d stream=%p inplace=%d", op, comm->name.c_str(), count,
       dtype, redop, root, stream, send == recv ? 1 : 0);
  std::string kind(op);
  return start_op(comm, call, [=](const std::string &inject) -> int {
    size_t es = dtype_size(dtype);
    size_t in_bytes = kind == "reducescatter" ? count * es * static_cast<size_t>(comm->nranks) : count * es;
    bool sends = !(kind == "broadcast" && comm->rank != root);
    std::vector<std::vector<char>> all;
    int r = comm->exchange(sends ? send : nullptr, sends ? in_bytes : 0, &all, inject);
    if (r != kSuccess) return r;
    int n = comm->nranks;
    if (kind == "broadcast") {
      memcpy(recv, all[static_cast<size_t>(root)].data(), count * es);
    } else if (kind == "allgather") {
      for (int p = 0; p < n; ++p)
        memcpy(static_cast<char *>(recv) + static_cast<size_t>(p) * count * es, all[static_cast<size_t>(p)].data(),
               count * es);
    } else {  // allreduce, reduce, reducescatter: rank order
      if (kind == "reduce" && comm->rank != root) return static_cast<int>(kSuccess);
      size_t off = kind == "reducescatter" ? static_cast<size_t>(comm->rank) * count * es : 0;
      if (dtype == 6 || dtype == 9) {
        if (count) reduce_half(dtype == 9, all, off, count, redop, recv);
        return static_cast<int>(kSuccess);
      }
      std::vector<char> acc(all[0].begin() + static_cast<long>(off),
                            all[0].begin() + static_cast<long>(off + count * es));
      for (int p = 1; p < n; ++p)
        if (!reduce(acc.data(), all[static_cast<size_t>(p)].data() + off, count, dtype, redop)) {
          comm->last_error = "fake NCCL: no reduction for dtype " + std::to_string(dtype);
          return static_cast<int>(kInvalidArgument);
        }
      if (redop == 4) divide(acc.data(), count, dtype, n);
      if (count) memcpy(recv, acc.data(), count * es);
    }
    return static_cast<int>(kSuccess);
  });
}

int ncclAllReduce(const void *s, void *r, size_t count, int dtype, int op, ncclComm *comm, void *stream) {
  return coll("ncclAllReduce", "allreduce", comm, s, r, count, dtype, op, -1, stream);
}
int ncclBroadcast(const void *s, void *r, size_t count, int dtype, int root, ncclComm *comm, void *stream) {
  return coll("ncclBroadcast", "broadcast", comm, s, r, count, dtype, -1, root, stream);
}
int ncclReduce(const void *s, void *r, size_t count, int dtype, int op, int root, ncclComm *comm, void *stream) {
  return coll("ncclReduce", "reduce", comm, s, r, count, dtype, op, root, stream);
}
int ncclAllGather(const void *s, void *r, size_t count, int dtype, ncclComm *comm, void *stream) {
  return coll("ncclAllGather", "allgather", comm, s, r, count, dtype, -1, -1, stream);
}
int ncclReduceScatter(const void *s, void *r, size_t count, int dtype, int op, ncclComm *comm, void *stream) {
  return coll("ncclReduceScatter", "reducescatter", comm, s, r, count, dtype, op, -1, stream);
}

int ncclGroupStart() {
  ++t_group_depth;
  return kSuccess;
}

static int p2p(bool send, void *buf, size_t count, int dtype, int peer, ncclComm *comm, void *stream) {
  if (!comm || peer < 0 || peer >= comm->nranks || dtype_size(dtype) == 0) return kInvalidArgument;
  logf("%s comm=%s peer=%d count=%zu dtype=%d stream=%p", send ? "send" : "recv", comm->name.c_str(), peer, count,
       dtype, stream);
  t_group.push_back({send, buf, count, dtype, peer, comm, stream});
  if (t_group_depth > 0) return kSuccess;
  ++t_group_depth;
  return ncclGroupEnd();
}

int ncclSend(const void *buf, size_t count, int dtype, int peer, ncclComm *comm, void *stream) {
  return p2p(true, const_cast<void *>(buf), count, dtype, peer, comm, stream);
}
int ncclRecv(void *buf, size_t count, int dtype, int peer, ncclComm *comm, void *stream) {
  return p2p(false, buf, count, dtype, peer, comm, stream);
}

int ncclGroupEnd() {
  if (t_group_depth <= 0) return kInvalidUsage;
  if (--t_group_depth > 0) return kSuccess;
  std::vector<P2p> ops;
  ops.swap(t_group);
  std::map<ncclComm *, std::vector<P2p>> by_comm;
  for (const P2p &op : ops) by_comm[op.comm].push_back(op);
  int result = kSuccess;
  for (auto &e : by_comm) {
    ncclComm *c = e.first;
    logf("group_end comm=%s ops=%zu", c->name.c_str(), e.second.size());
    bool any_send = false;
    for (const P2p &op : e.second) any_send |= op.send;
    int r = start_op(c, any_send ? "ncclSend" : "ncclRecv",
                     [c, batch = e.second](const std::string &inject) { return run_p2p(c, batch, inject); });
    if (r != kSuccess && r != kInProgress) return r;
    result = r;
  }
  return result;
}

}  // extern "C"
