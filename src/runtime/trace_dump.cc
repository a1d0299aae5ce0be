#include "runtime/trace_dump.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "base/dtype.h"
#include "base/env.h"
#include "base/host_id.h"
#include "base/log.h"

namespace xc {

namespace {

// Depth beyond which a ring is more memory than a trace is worth (256
// bytes a slot: 1 Mi slots are 256 MiB per communicator; the default 64
// are 16 KiB).
constexpr int64_t kMaxDepth = 1 << 20;

int64_t clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// s as a JSON string's body.
void json_escape(std::string *out, const char *s) {
  for (; *s; ++s) {
    unsigned char c = static_cast<unsigned char>(*s);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else if (c < 0x20) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\u%04x", c);
      out->append(buf);
    } else {
      out->push_back(static_cast<char>(c));
    }
  }
}

void add_str(std::string *out, const char *key, const std::string &value) {
  out->append(",\"").append(key).append("\":\"");
  json_escape(out, value.c_str());
  out->push_back('"');
}
void add_int(std::string *out, const char *key, int64_t value) {
  out->append(",\"").append(key).append("\":").append(std::to_string(value));
}
void add_uint(std::string *out, const char *key, uint64_t value) {
  out->append(",\"").append(key).append("\":").append(std::to_string(value));
}

// A name safe in a file name: letters, digits, '-', '_' and '.' kept, the rest '_'.
std::string file_safe(const std::string &s) {
  std::string out = s.empty() ? "unnamed" : s;
  for (char &c : out) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
                c == '.';
    if (!keep) c = '_';
  }
  return out;
}

struct FileCloser {
  void operator()(FILE *f) const {
    if (f) fclose(f);
  }
};

// SIGUSR2: the handler writes a byte to a pipe; a thread of ours reads it
// and dumps every live communicator. The thread runs while communicators
// live (it is joined when the last one is freed, and at exit).
std::atomic<int> g_signal_fd{-1};  // the pipe's write end, for the handler

void on_sigusr2(int) {
  int saved = errno;
  int fd = g_signal_fd.load(std::memory_order_relaxed);
  if (fd >= 0) {
    char b = 'd';
    ssize_t n = write(fd, &b, 1);  // non-blocking: a full pipe already asks for a dump
    (void)n;
  }
  errno = saved;
}

class Dumper {
 public:
  ~Dumper() {
    std::unique_lock<std::mutex> lock(mu_);
    stop(lock);
    g_signal_fd.store(-1);
    if (fds_[0] >= 0) close(fds_[0]);
    if (fds_[1] >= 0) close(fds_[1]);
  }

  void add(xc_comm_s *comm) {
    std::lock_guard<std::mutex> lock(mu_);
    comms_.push_back(comm);
    if (installed_ && !thread_.joinable()) thread_ = std::thread([this] { loop(); });
  }

  void remove(xc_comm_s *comm) {
    std::unique_lock<std::mutex> lock(mu_);
    comms_.erase(std::remove(comms_.begin(), comms_.end(), comm), comms_.end());
    if (comms_.empty()) stop(lock);
  }

  void install() {
    std::lock_guard<std::mutex> lock(mu_);
    if (tried_) return;
    tried_ = true;
    if (env_get("XC_TRACE_DIR").empty()) return;
    struct sigaction old;
    if (sigaction(SIGUSR2, nullptr, &old) != 0) return;
    if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) {
      XC_INFO("SIGUSR2 has a handler already: the flight recorder does not dump on it");
      return;
    }
    if (pipe2(fds_, O_CLOEXEC) != 0) {
      XC_WARN("flight recorder: no pipe for SIGUSR2 (%s)", strerror(errno));
      return;
    }
    fcntl(fds_[1], F_SETFL, fcntl(fds_[1], F_GETFL) | O_NONBLOCK);  // the handler never blocks
    g_signal_fd.store(fds_[1]);
    struct sigaction sa = {};
    sa.sa_handler = on_sigusr2;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    if (sigaction(SIGUSR2, &sa, nullptr) != 0) {
      XC_WARN("flight recorder: cannot handle SIGUSR2 (%s)", strerror(errno));
      return;
    }
    installed_ = true;
    if (!comms_.empty() && !thread_.joinable()) thread_ = std::thread([this] { loop(); });
  }

 private:
  // Called with mu_ held; the thread takes mu_ for each dump, so it is
  // released while joining.
  void stop(std::unique_lock<std::mutex> &lock) {
    if (!thread_.joinable()) return;
    char q = 'q';
    while (write(fds_[1], &q, 1) < 0 && errno == EINTR) {
    }
    std::thread t = std::move(thread_);
    lock.unlock();
    t.join();
    lock.lock();
  }

  void loop() {
    for (;;) {
      char buf[64];
      ssize_t n = read(fds_[0], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      bool quit = false, dump = false;
      for (ssize_t i = 0; i < n; ++i) (buf[i] == 'q' ? quit : dump) = true;
      if (dump) {
        std::lock_guard<std::mutex> lock(mu_);
        for (xc_comm_s *c : comms_) {
          std::string path = trace_default_path(c);
          if (path.empty()) continue;
          Status st = trace_dump(c, path, "signal");
          if (!st.ok()) XC_WARN("flight recorder: %s", st.message().c_str());
        }
      }
      if (quit) return;
    }
  }

  std::mutex mu_;
  std::vector<xc_comm_s *> comms_;
  int fds_[2] = {-1, -1};
  bool tried_ = false, installed_ = false;
  std::thread thread_;
};

Dumper &dumper() {
  static Dumper d;
  return d;
}

}  // namespace

Status trace_make_recorder(std::unique_ptr<FlightRecorder> *out) {
  int64_t depth = 0;
  XC_TRY(env_int("XC_TRACE_DEPTH", &depth));
  if (depth > kMaxDepth) depth = kMaxDepth;  // the registry's range says so already
  out->reset(depth > 0 ? new FlightRecorder(static_cast<size_t>(depth)) : nullptr);
  return Status::Ok();
}

std::string trace_default_path(const xc_comm_s *comm) {
  std::string dir = env_get("XC_TRACE_DIR");
  if (dir.empty()) return dir;
  const std::string &job = comm->fabric ? comm->fabric->job_id() : std::string();
  std::string id = job.empty() ? std::to_string(getpid()) : job;
  return dir + "/xcomm-trace." + file_safe(id) + "." + file_safe(comm->name) + ".r" + std::to_string(comm->rank) +
         ".jsonl";
}

Status trace_dump(const xc_comm_s *comm, const std::string &path, const char *reason) {
  std::vector<TraceEntry> entries;
  if (comm->recorder) entries = comm->recorder->snapshot();
  std::string text = "{\"xcomm_trace\":1";
  add_str(&text, "job", comm->fabric ? comm->fabric->job_id() : std::string());
  add_int(&text, "rank", comm->rank);
  add_str(&text, "comm", comm->name);
  add_uint(&text, "ctx", comm->ctx);
  add_int(&text, "size", comm->size);
  add_str(&text, "host", host_name());
  add_int(&text, "pid", getpid());
  add_uint(&text, "depth", comm->recorder ? comm->recorder->depth() : 0);
  add_str(&text, "reason", reason);
  add_int(&text, "wall_ns", clock_ns(CLOCK_REALTIME));
  add_int(&text, "steady_ns", clock_ns(CLOCK_MONOTONIC));
  text += "}\n";
  for (const TraceEntry &e : entries) {
    text += "{\"seq\":" + std::to_string(e.op.seq);
    add_str(&text, "op", e.op.op ? e.op.op : "?");
    add_uint(&text, "count", e.op.count);
    auto dtype = static_cast<xc_dtype_t>(e.op.dtype);
    add_str(&text, "dtype", dtype_name(dtype));
    add_str(&text, "redop", op_name(static_cast<xc_op_t>(e.op.redop)));
    add_int(&text, "root", e.op.root);
    add_uint(&text, "bytes", e.op.count * dtype_size(dtype));
    add_str(&text, "state", trace_state_name(e.state));
    add_int(&text, "start_ns", e.start_ns);
    add_int(&text, "end_ns", e.end_ns);
    add_int(&text, "status", e.status);
    add_str(&text, "message", e.message);
    text += "}\n";
  }
  std::string tmp = path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(gettid());
  {
    std::unique_ptr<FILE, FileCloser> f(fopen(tmp.c_str(), "we"));
    if (!f) return SystemError(errno, "cannot write the trace to %s", tmp.c_str());
    if (fwrite(text.data(), 1, text.size(), f.get()) != text.size() || fflush(f.get()) != 0) {
      int err = errno;
      unlink(tmp.c_str());
      return SystemError(err, "cannot write the trace to %s", tmp.c_str());
    }
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return SystemError(err, "cannot rename the trace to %s", path.c_str());
  }
  return Status::Ok();
}

void trace_register(xc_comm_s *comm) { dumper().add(comm); }
void trace_unregister(xc_comm_s *comm) { dumper().remove(comm); }
void trace_install_signal() { dumper().install(); }

void trace_failed(xc_comm_s *comm, int seq, const Status &st) {
  FlightRecorder *r = comm->recorder.get();
  if (r) r->end(static_cast<uint64_t>(seq), st.code(), st.message().c_str(), trace_now_precise());
  if (st.code() != XC_ERR_TIMEOUT && st.code() != XC_ERR_PEER_FAILED) return;
  // The first such failure says who is behind; the ops that fail after it
  // on the broken communicator add nothing (a dump on request still can).
  if (comm->trace_dumped.exchange(true)) return;
  std::string path = trace_default_path(comm);
  if (path.empty()) return;
  Status d = trace_dump(comm, path, st.code() == XC_ERR_TIMEOUT ? "timeout" : "peer_failed");
  if (!d.ok()) XC_WARN("flight recorder: %s", d.message().c_str());
}

}  // namespace xc
