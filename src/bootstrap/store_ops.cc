// Collectives over the bootstrap store (allgather, barrier) and the random
// job token.
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/log.h"
#include "bootstrap/store.h"

namespace xc::bootstrap {

namespace {

int total_ms(const Deadline &d) {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(d.at() - Deadline::Clock::now()).count();
  if (us < 0) return 0;
  return static_cast<int>(std::min<int64_t>((us + 500) / 1000, 1 << 30));
}

// "rank 3" / "ranks 2, 5" / "ranks 0, 1, ... and 90 more".
std::string rank_list(const std::vector<int> &ranks) {
  constexpr size_t kShown = 16;
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size() && i < kShown; ++i) {
    if (i) s += ", ";
    s += std::to_string(ranks[i]);
  }
  if (ranks.size() > kShown) s += " and " + std::to_string(ranks.size() - kShown) + " more";
  return s;
}

// " (node rank 1, of nodes with 2 ranks each)" for the nodes the missing
// ranks (ascending) belong to; "" when the layout is unknown.
std::string node_list(const std::vector<int> &missing, int per_node) {
  if (per_node < 1) return "";
  std::vector<int> nodes;
  for (int r : missing)
    if (nodes.empty() || nodes.back() != r / per_node) nodes.push_back(r / per_node);
  std::string s = rank_list(nodes);  // "rank 1" / "ranks 1, 3"
  return " (node " + s + ", of nodes with " + std::to_string(per_node) + " ranks each)";
}

bool fill_random(unsigned char *buf, size_t n) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = getrandom(buf + done, n - done, 0);
    if (r > 0) {
      done += static_cast<size_t>(r);
      continue;
    }
    if (r < 0 && errno == EINTR) continue;
    break;
  }
  if (done == n) return true;
  // getrandom() missing (old kernel, seccomp): the same source through the device.
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  while (done < n) {
    ssize_t r = read(fd, buf + done, n - done);
    if (r > 0) {
      done += static_cast<size_t>(r);
      continue;
    }
    if (r < 0 && errno == EINTR) continue;
    break;
  }
  close(fd);
  return done == n;
}

uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

size_t store_max_value() {
  int64_t v = 0;
  if (!env_int("XC_STORE_MAX_VALUE", &v).ok()) return kMaxValueBytes;  // xc_init reports a bad value
  return std::min(static_cast<size_t>(v), kMaxValueBytes);
}

std::string make_token() {
  unsigned char bytes[kTokenBytes / 2];
  if (!fill_random(bytes, sizeof bytes)) {
    // No kernel randomness at all: still unique per process, but guessable.
    XC_WARN("no kernel randomness (getrandom and /dev/urandom failed): the bootstrap token is guessable");
    uint64_t state = static_cast<uint64_t>(Deadline::Clock::now().time_since_epoch().count()) ^
                     (static_cast<uint64_t>(getpid()) << 32) ^ reinterpret_cast<uintptr_t>(&state);
    for (size_t i = 0; i < sizeof bytes; i += 8) {
      uint64_t v = splitmix64(&state);
      for (size_t j = 0; j < 8 && i + j < sizeof bytes; ++j) bytes[i + j] = static_cast<unsigned char>(v >> (8 * j));
    }
  }
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(kTokenBytes);
  for (unsigned char b : bytes) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

// Every rank sets prefix/<rank> and counts itself in prefix/count. Asking
// for every key one by one would cost n^2 requests in all (minutes at a few
// thousand ranks, the server answering one at a time); instead the rank that
// brings the count to n reads the n values once and publishes them together
// under prefix/all, which every other rank waits for with one parked GET:
// about 4n requests. The per-rank keys stay, so a timeout can name the ranks
// that never arrived.
Status store_allgather(StoreClient &store, const std::string &prefix, int rank, int nranks, const std::string &mine,
                       Deadline deadline, std::vector<std::string> *all, int ranks_per_node) {
  if (nranks < 1 || rank < 0 || rank >= nranks || !all)
    return Error(XC_ERR_INVALID_ARGUMENT, "bootstrap allgather '%s': rank %d of %d ranks is out of range",
                 prefix.c_str(), rank, nranks);
  const int waited_ms = total_ms(deadline);
  const std::string ctx = "bootstrap allgather '" + prefix + "'";
  auto key_of = [&prefix](int r) { return prefix + "/" + std::to_string(r); };
  XC_TRY_CTX(store.set(key_of(rank), mine), ctx);
  if (nranks == 1) {
    *all = {mine};
    return Status::Ok();
  }
  int64_t arrived = 0;
  XC_TRY_CTX(store.add(prefix + "/count", 1, &arrived), ctx);
  if (arrived > nranks)
    return Error(XC_ERR_INVALID_USAGE, "%s: %lld ranks arrived for %d (prefix used twice, or ranks disagree on nranks?)",
                 ctx.c_str(), static_cast<long long>(arrived), nranks);

  std::vector<std::string> out(static_cast<size_t>(nranks));
  if (arrived == nranks) {
    // The last to arrive: every key is set (each rank sets before it counts).
    size_t total = 1;
    for (int r = 0; r < nranks; ++r) {
      if (r == rank) {
        out[static_cast<size_t>(r)] = mine;
      } else {
        XC_TRY_CTX(store.get(key_of(r), deadline, &out[static_cast<size_t>(r)]), ctx);
      }
      total += 4 + out[static_cast<size_t>(r)].size();
    }
    // 'A' + n × (u32 length, bytes); or 'I' when that would exceed the
    // store's value limit, and each rank reads the keys one by one.
    std::string packed;
    if (total <= store_max_value()) {
      packed.reserve(total);
      packed.push_back('A');
      for (const std::string &v : out) {
        uint32_t n = static_cast<uint32_t>(v.size());
        char b[4] = {static_cast<char>(n), static_cast<char>(n >> 8), static_cast<char>(n >> 16),
                     static_cast<char>(n >> 24)};
        packed.append(b, 4);
        packed.append(v);
      }
    } else {
      packed = "I";
    }
    Status s = store.set(prefix + "/all", packed);
    if (s.code() == XC_ERR_INVALID_USAGE && packed != "I") {
      // The store refused the packed values (its XC_STORE_MAX_VALUE is
      // lower than ours, or it is busy with other large requests): the
      // ranks read the keys one by one instead.
      XC_INFO("%s: the store refused %zu bytes of packed values (%s); the ranks read them one by one", ctx.c_str(),
              packed.size(), s.message().c_str());
      s = store.set(prefix + "/all", "I");
    }
    XC_TRY_CTX(std::move(s), ctx);
    *all = std::move(out);
    return Status::Ok();
  }

  std::string packed;
  Status s = store.get(prefix + "/all", deadline, &packed);
  if (!s.ok()) {
    if (s.code() != XC_ERR_TIMEOUT) return std::move(s.with_context(ctx));
    // Name every rank still missing.
    std::vector<std::string> keys;
    for (int q = 0; q < nranks; ++q) keys.push_back(key_of(q));
    std::vector<bool> present;
    std::vector<int> missing;
    if (!store.check(keys, &present).ok())
      return Error(XC_ERR_TIMEOUT, "%s timed out after %d ms (the store could not say which ranks are missing)",
                   ctx.c_str(), waited_ms);
    for (int q = 0; q < nranks; ++q)
      if (!present[static_cast<size_t>(q)]) missing.push_back(q);
    if (missing.empty())
      return Error(XC_ERR_TIMEOUT, "%s timed out after %d ms: every rank arrived, but only just", ctx.c_str(),
                   waited_ms);
    return Error(XC_ERR_TIMEOUT, "%s timed out after %d ms: %s never arrived%s", ctx.c_str(), waited_ms,
                 rank_list(missing).c_str(), node_list(missing, ranks_per_node).c_str());
  }
  if (packed == "I") {
    for (int r = 0; r < nranks; ++r) XC_TRY_CTX(store.get(key_of(r), deadline, &out[static_cast<size_t>(r)]), ctx);
  } else {
    size_t off = 1;
    bool ok = !packed.empty() && packed[0] == 'A';
    for (int r = 0; ok && r < nranks; ++r) {
      if (packed.size() - off < 4) {
        ok = false;
        break;
      }
      const unsigned char *u = reinterpret_cast<const unsigned char *>(packed.data() + off);
      size_t n = static_cast<size_t>(u[0]) | static_cast<size_t>(u[1]) << 8 | static_cast<size_t>(u[2]) << 16 |
                 static_cast<size_t>(u[3]) << 24;
      off += 4;
      if (packed.size() - off < n) {
        ok = false;
        break;
      }
      out[static_cast<size_t>(r)].assign(packed, off, n);
      off += n;
    }
    if (!ok || off != packed.size())
      return Error(XC_ERR_INVALID_USAGE, "%s: the gathered values do not parse (do all ranks pass the same nranks?)",
                   ctx.c_str());
  }
  *all = std::move(out);
  return Status::Ok();
}

// Each rank adds one to the counter; the one that brings it to nranks sets
// key/done, which the others wait for with a parked GET (no polling).
Status store_barrier(StoreClient &store, const std::string &key, int nranks, Deadline deadline) {
  if (nranks < 1) return Error(XC_ERR_INVALID_ARGUMENT, "bootstrap barrier '%s': %d ranks", key.c_str(), nranks);
  const int waited_ms = total_ms(deadline);
  int64_t arrived = 0;
  XC_TRY_CTX(store.add(key, 1, &arrived), "bootstrap barrier '" + key + "'");
  if (arrived > nranks)
    return Error(XC_ERR_INVALID_USAGE,
                 "bootstrap barrier '%s': %lld ranks arrived for a barrier of %d (key used twice?)", key.c_str(),
                 static_cast<long long>(arrived), nranks);
  if (arrived == nranks) {
    XC_TRY_CTX(store.set(key + "/done", "1"), "bootstrap barrier '" + key + "'");
    return Status::Ok();
  }
  std::string done;
  Status s = store.get(key + "/done", deadline, &done);
  if (s.ok()) return s;
  if (s.code() != XC_ERR_TIMEOUT) return std::move(s.with_context("bootstrap barrier '" + key + "'"));
  int64_t now = arrived;
  (void)store.add(key, 0, &now);  // best effort: the count as it is now
  return Error(XC_ERR_TIMEOUT, "bootstrap barrier '%s' timed out after %d ms: %lld of %d ranks arrived", key.c_str(),
               waited_ms, static_cast<long long>(now), nranks);
}

}  // namespace xc::bootstrap
