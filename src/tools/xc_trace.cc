// xc-trace: reads the flight recorder's dumps (one file per rank and
// communicator, written by xc_comm_trace_dump, on a timeout or peer failure,
// or on SIGUSR2; docs/design.md "Flight recorder") and says, per
// communicator, which op each rank entered last and who is behind.
//
//   xc-trace DIR_OR_FILE...
//
// A directory stands for its xcomm-trace.*.jsonl files. Exit status 0 when
// every input was read (whatever the verdict), 1 when one could not be, 2
// on a bad command line. No library: the dumps are read with a reader for
// exactly the lines the library writes (one flat JSON object per line).
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

namespace {

struct Entry {
  uint64_t seq = 0;
  std::string op, state, message;
  int64_t start_ns = 0, end_ns = 0, status = 0;
};

struct Dump {
  std::string file, job, comm, host, reason;
  int64_t rank = 0, size = 0, pid = 0, wall_ns = 0, steady_ns = 0;
  uint64_t ctx = 0;
  std::vector<Entry> entries;  // oldest first
  const Entry *last() const { return entries.empty() ? nullptr : &entries.back(); }
  // A steady-clock time of this rank as wall-clock ns (clocks of different hosts differ).
  int64_t wall_of(int64_t steady) const { return wall_ns - (steady_ns - steady); }
};

// Where "key": starts its value in line, or npos. Keys never occur inside
// the strings the library writes: a '"' there is always escaped.
size_t value_at(const std::string &line, const char *key) {
  std::string pat = std::string("\"") + key + "\":";
  size_t p = line.find(pat);
  return p == std::string::npos ? p : p + pat.size();
}

bool get_str(const std::string &line, const char *key, std::string *out) {
  size_t p = value_at(line, key);
  if (p == std::string::npos || p >= line.size() || line[p] != '"') return false;
  out->clear();
  for (++p; p < line.size(); ++p) {
    char c = line[p];
    if (c == '"') return true;
    if (c != '\\') {
      out->push_back(c);
      continue;
    }
    if (++p >= line.size()) return false;
    switch (line[p]) {
      case 'n': out->push_back('\n'); break;
      case 't': out->push_back('\t'); break;
      case 'r': out->push_back('\r'); break;
      case 'b': out->push_back('\b'); break;
      case 'f': out->push_back('\f'); break;
      case 'u': {
        if (p + 4 >= line.size()) return false;
        unsigned v = static_cast<unsigned>(strtoul(line.substr(p + 1, 4).c_str(), nullptr, 16));
        out->push_back(v < 0x80 ? static_cast<char>(v) : '?');
        p += 4;
        break;
      }
      default: out->push_back(line[p]); break;  // \" \\ \/
    }
  }
  return false;
}

// The number after "key": (int64_t or uint64_t).
template <class T>
bool get_num(const std::string &line, const char *key, T *out) {
  size_t p = value_at(line, key);
  if (p == std::string::npos) return false;
  const char *s = line.c_str() + p;
  char *end = nullptr;
  errno = 0;
  T v;
  if constexpr (std::is_signed_v<T>)
    v = strtoll(s, &end, 10);
  else
    v = strtoull(s, &end, 10);
  if (end == s || errno == ERANGE) return false;
  *out = v;
  return true;
}

// One dump file; false with *why when it cannot be read or is not a dump.
bool read_dump(const std::string &file, Dump *d, std::string *why) {
  std::ifstream in(file);
  if (!in) {
    *why = std::string("cannot open: ") + strerror(errno);
    return false;
  }
  std::string line;
  if (!std::getline(in, line)) {
    *why = "empty file";
    return false;
  }
  int64_t version = 0;
  d->file = file;
  if (!get_num(line, "xcomm_trace", &version) || version != 1 || !get_str(line, "comm", &d->comm) ||
      !get_num(line, "rank", &d->rank) || !get_num(line, "size", &d->size) || !get_num(line, "wall_ns", &d->wall_ns) ||
      !get_num(line, "steady_ns", &d->steady_ns)) {
    *why = "the first line is not a flight recorder header";
    return false;
  }
  get_str(line, "job", &d->job);
  get_str(line, "host", &d->host);
  get_str(line, "reason", &d->reason);
  get_num(line, "pid", &d->pid);
  get_num(line, "ctx", &d->ctx);
  for (int n = 2; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    Entry e;
    if (!get_num(line, "seq", &e.seq) || !get_str(line, "op", &e.op) || !get_str(line, "state", &e.state) ||
        !get_num(line, "start_ns", &e.start_ns) || !get_num(line, "end_ns", &e.end_ns) ||
        !get_num(line, "status", &e.status)) {
      *why = "line " + std::to_string(n) + " is not an entry";
      return false;
    }
    get_str(line, "message", &e.message);
    d->entries.push_back(std::move(e));
  }
  std::sort(d->entries.begin(), d->entries.end(), [](const Entry &a, const Entry &b) { return a.seq < b.seq; });
  return true;
}

bool is_dump_name(const char *name) {
  size_t n = strlen(name);
  return strncmp(name, "xcomm-trace.", 12) == 0 && n > 6 && strcmp(name + n - 6, ".jsonl") == 0;
}

// "rank 2" / "ranks 0, 1"
std::string ranks_text(const std::vector<int64_t> &ranks) {
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s;
}

std::string seconds(int64_t ns) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(ns) / 1e9);
  return buf;
}

bool waiting(const Entry &e) { return e.state == "running" || e.state == "enqueued"; }

void report(const std::string &comm, std::map<int64_t, const Dump *> &ranks) {
  const Dump &any = *ranks.begin()->second;
  printf("comm '%s' (job %s, %lld ranks, %zu dumps)\n", comm.c_str(), any.job.empty() ? "?" : any.job.c_str(),
         static_cast<long long>(any.size), ranks.size());
  uint64_t newest = 0;
  bool have_op = false;
  for (auto &[r, d] : ranks) {
    const Entry *e = d->last();
    if (!e) {
      printf("  rank %lld: no op recorded\n", static_cast<long long>(r));
      continue;
    }
    have_op = true;
    newest = std::max(newest, e->seq);
    printf("  rank %lld: op #%llu (%s) %s, entered %s before the dump", static_cast<long long>(r),
           static_cast<unsigned long long>(e->seq), e->op.c_str(), e->state.c_str(),
           e->start_ns ? seconds(d->steady_ns - e->start_ns).c_str() : "(not started)");
    if (e->end_ns) printf(", ended %s before it", seconds(d->steady_ns - e->end_ns).c_str());
    if (e->status) printf(": status %lld: %s", static_cast<long long>(e->status), e->message.c_str());
    printf("\n");
  }
  std::vector<int64_t> missing;
  for (int64_t r = 0; r < any.size; ++r)
    if (!ranks.count(r)) missing.push_back(r);
  if (!missing.empty())
    printf("  %s left no dump\n", ranks_text(missing).c_str());
  if (!have_op) {
    printf("comm '%s': no rank recorded an op\n", comm.c_str());
    return;
  }
  std::vector<int64_t> behind, ahead, failed, in_it, finished;
  std::string op;
  const Dump *first_failed = nullptr;
  for (auto &[r, d] : ranks) {
    const Entry *e = d->last();
    if (!e || e->seq < newest) {
      behind.push_back(r);
      continue;
    }
    ahead.push_back(r);
    op = e->op;
    if (e->state == "failed") {
      failed.push_back(r);
      if (!first_failed || d->wall_of(e->end_ns) < first_failed->wall_of(first_failed->last()->end_ns))
        first_failed = d;
    } else if (waiting(*e)) {
      in_it.push_back(r);
    } else {
      finished.push_back(r);
    }
  }
  std::string head = "comm '" + comm + "': ";
  std::string opname = "op #" + std::to_string(newest) + " (" + op + ")";
  // Ranks without a dump may be anywhere: say so rather than speak for them.
  std::string every = missing.empty() ? "every rank" : "every rank that left a dump";
  std::string all = missing.empty() ? "all ranks" : "all ranks that left a dump";
  std::string tail = missing.empty() ? "" : "; " + ranks_text(missing) + " left no dump";
  if (!behind.empty()) {
    bool one = behind.size() == 1;
    std::string what;
    if (in_it.size() == ahead.size())
      what = "that " + ranks_text(ahead) + (ahead.size() == 1 ? " waits" : " wait") + " in";
    else if (failed.size() == ahead.size())
      what = "that " + ranks_text(ahead) + " failed: " + first_failed->last()->message;
    else
      what = "that " + ranks_text(ahead) + " entered";
    printf("%s%s %s behind: %s never entered %s %s%s\n", head.c_str(), ranks_text(behind).c_str(),
           one ? "is" : "are", one ? "it" : "they", opname.c_str(), what.c_str(), tail.c_str());
  } else if (!failed.empty()) {
    printf("%s%s entered %s; rank %lld failed it first: %s%s\n", head.c_str(), every.c_str(), opname.c_str(),
           static_cast<long long>(first_failed->rank), first_failed->last()->message.c_str(), tail.c_str());
  } else if (!in_it.empty()) {
    printf("%s%s entered %s; %s %s still in it%s%s%s\n", head.c_str(), every.c_str(), opname.c_str(),
           ranks_text(in_it).c_str(), in_it.size() == 1 ? "is" : "are", finished.empty() ? "" : ", finished by ",
           finished.empty() ? "" : ranks_text(finished).c_str(), tail.c_str());
  } else {
    printf("%s%s idle at %s%s\n", head.c_str(), all.c_str(), opname.c_str(), tail.c_str());
  }
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
    fprintf(stderr,
            "usage: xc-trace DIR_OR_FILE...\n"
            "  Reads xcomm's flight recorder dumps (xcomm-trace.*.jsonl: XC_TRACE_DIR, xc_comm_trace_dump)\n"
            "  and prints, per communicator, each rank's last op and who is behind.\n");
    return argc < 2 ? 2 : 0;
  }
  std::vector<std::string> files;
  int bad = 0;
  for (int i = 1; i < argc; ++i) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "xc-trace: %s: %s\n", argv[i], strerror(errno));
      ++bad;
      continue;
    }
    if (!S_ISDIR(st.st_mode)) {
      files.push_back(argv[i]);
      continue;
    }
    DIR *dir = opendir(argv[i]);
    if (!dir) {
      fprintf(stderr, "xc-trace: %s: %s\n", argv[i], strerror(errno));
      ++bad;
      continue;
    }
    std::vector<std::string> found;
    while (struct dirent *de = readdir(dir))
      if (is_dump_name(de->d_name)) found.push_back(std::string(argv[i]) + "/" + de->d_name);
    closedir(dir);
    if (found.empty()) {
      fprintf(stderr, "xc-trace: %s: no xcomm-trace.*.jsonl files\n", argv[i]);
      ++bad;
    }
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  std::vector<Dump> dumps;
  dumps.reserve(files.size());
  for (const std::string &f : files) {
    Dump d;
    std::string why;
    if (!read_dump(f, &d, &why)) {
      fprintf(stderr, "xc-trace: %s: %s\n", f.c_str(), why.c_str());
      ++bad;
      continue;
    }
    dumps.push_back(std::move(d));
  }
  // By communicator (job, name, context id), then rank; of two dumps of
  // one rank the later one.
  std::map<std::string, std::pair<std::string, std::map<int64_t, const Dump *>>> comms;
  for (const Dump &d : dumps) {
    std::string key = d.job + '\n' + d.comm + '\n' + std::to_string(d.ctx);
    auto &slot = comms[key];
    slot.first = d.comm;
    const Dump *&have = slot.second[d.rank];
    if (!have || have->wall_ns < d.wall_ns) have = &d;
  }
  bool first = true;
  for (auto &[key, c] : comms) {
    if (!first) printf("\n");
    first = false;
    report(c.first, c.second);
  }
  return bad ? 1 : 0;
}
