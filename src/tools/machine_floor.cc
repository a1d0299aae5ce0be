// xc-machine-floor: what this machine allows at best, with no library in
// the way, for the rows of docs/benchmarks.md that sit near a floor.
//
//   xc-machine-floor arrive [PROCS] [ROUNDS]   (default 4 processes, 200000 rounds)
//     PROCS processes meet in rounds: each publishes its round number in
//     shared memory and waits for every other's. Process i is bound to the
//     i-th allowed cpu (modulo their count), the even spread. A waiter
//     yields at once when processes outnumber the cpus (the one it waits
//     for may need its core), else spins. Prints µs per round: the least
//     any collective of PROCS ranks costs here (8 B allreduce, barrier).
//   xc-machine-floor copy [MIB] [PROCS]        (default 32 MiB, 2 processes)
//     PROCS processes copy MIB at the same time, each between buffers of
//     its own (memcpy; streaming stores as xcomm's copy_streaming) and from
//     the next process's buffer (process_vm_readv, 1 MiB per call). Prints
//     the median and best time per copy over 20 rounds, after checking
//     that every copy holds the bytes it should.
//
// Not installed; figures and commands in docs/benchmarks.md.
#include <sched.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/deadline.h"
#include "cpu/copy.h"

namespace {

using Clock = std::chrono::steady_clock;

struct alignas(64) Line {
  std::atomic<long> value{0};
};

// Shared anonymous memory: visible to the processes forked after it.
template <class T>
T *shared_array(size_t n) {
  void *p = mmap(nullptr, n * sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  return new (p) T[n];
}

// Runs body(index) in procs forked processes; returns false if one failed.
template <class Body>
bool run_procs(int procs, Body body) {
  for (int i = 0; i < procs; ++i) {
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      return false;
    }
    if (pid == 0) _exit(body(i));
  }
  bool ok = true;
  int status = 0;
  while (wait(&status) > 0) ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return ok;
}

// Process me reaches round k and waits for every other process to reach it;
// one that failed never comes, so a wait gives up after a minute.
void meet(Line *lines, int procs, int me, long k, bool yield) {
  lines[me].value.store(k, std::memory_order_release);
  for (int q = 0; q < procs; ++q) {
    xc::Deadline limit;  // set at the 1024th poll: no clock read in a round that goes well
    for (unsigned polls = 1; lines[q].value.load(std::memory_order_acquire) < k; ++polls) {
      if (yield) sched_yield();
      if (polls % 1024 != 0) continue;
      if (polls == 1024) limit = xc::Deadline::AfterMs(60000);
      if (limit.expired()) {
        fprintf(stderr, "process %d: process %d did not reach round %ld within a minute\n", me, q, k);
        _exit(1);
      }
    }
  }
}

// Binds this process to the i-th cpu it may run on (modulo their count).
void bind_to_nth_cpu(int i) {
  cpu_set_t allowed, one;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  int n = CPU_COUNT(&allowed), want = i % n;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &allowed) && want-- == 0) {
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      sched_setaffinity(0, sizeof one, &one);
      return;
    }
}

int arrive(int procs, long rounds) {
  if (procs < 1 || rounds < 1) {
    fprintf(stderr, "arrive: at least 1 process and 1 round\n");
    return 2;
  }
  Line *lines = shared_array<Line>(static_cast<size_t>(procs));
  double *us = shared_array<double>(1);
  bool yield = procs > sysconf(_SC_NPROCESSORS_ONLN);
  long warm = std::min(rounds / 10, 1000L);
  bool ok = run_procs(procs, [&](int me) {
    bind_to_nth_cpu(me);
    Clock::time_point start;
    for (long k = 1; k <= warm + rounds; ++k) {
      if (k == warm + 1) start = Clock::now();
      meet(lines, procs, me, k, yield);
    }
    if (me == 0) *us = std::chrono::duration<double, std::micro>(Clock::now() - start).count() / rounds;
    return 0;
  });
  if (!ok) return 1;
  printf("arrive: %d processes, %s while waiting: %.3f us per round\n", procs, yield ? "yield" : "spin", *us);
  return 0;
}

constexpr int kCopyRounds = 20;
constexpr int kCopyWays = 3;  // memcpy, streaming stores, process_vm_readv

struct CopyShared {
  Line round[64];  // per process: the round it reached
  pid_t pid[64];
  char *src[64];   // per process: its source buffer
  double seconds[kCopyWays][kCopyRounds];  // process 0's time per way and round
};

// Whether dst holds bytes copies of value.
bool all_equal(const char *dst, size_t bytes, char value) {
  for (size_t i = 0; i < bytes; ++i)
    if (dst[i] != value) return false;
  return true;
}

int copy(size_t mib, int procs) {
  if (procs < 1 || procs > 64) {
    fprintf(stderr, "copy: 1 to 64 processes\n");
    return 2;
  }
  const size_t bytes = mib << 20, call = 1 << 20;
  auto *sh = shared_array<CopyShared>(1);
  const char *names[kCopyWays] = {"memcpy", "streaming stores", "process_vm_readv"};
  bool ok = run_procs(procs, [&](int me) {
    char *src = static_cast<char *>(aligned_alloc(4096, bytes)), *dst = static_cast<char *>(aligned_alloc(4096, bytes));
    if (!src || !dst) return 1;
    memset(src, me + 1, bytes);  // touched: no page faults inside the timing
    memset(dst, 0, bytes);
    sh->pid[me] = getpid();
    sh->src[me] = src;
    long k = 0;
    meet(sh->round, procs, me, ++k, true);
    int peer = (me + 1) % procs;
    for (int way = 0; way < kCopyWays; ++way) {
      memset(dst, 0, bytes);
      for (int r = 0; r < kCopyRounds; ++r) {
        meet(sh->round, procs, me, ++k, true);
        auto t0 = Clock::now();
        if (way == 0) memcpy(dst, src, bytes);
        if (way == 1) xc::cpu::copy_streaming(dst, src, bytes);
        if (way == 2) {
          for (size_t at = 0; at < bytes; at += call) {
            iovec local{dst + at, std::min(call, bytes - at)}, remote{sh->src[peer] + at, local.iov_len};
            if (process_vm_readv(sh->pid[peer], &local, 1, &remote, 1, 0) != static_cast<ssize_t>(local.iov_len)) {
              perror("process_vm_readv");
              return 1;
            }
          }
        }
        meet(sh->round, procs, me, ++k, true);
        if (me == 0) sh->seconds[way][r] = std::chrono::duration<double>(Clock::now() - t0).count();
      }
      if (!all_equal(dst, bytes, static_cast<char>((way == 2 ? peer : me) + 1))) {
        fprintf(stderr, "copy: process %d: %s copied wrong bytes\n", me, names[way]);
        return 1;
      }
    }
    return 0;
  });
  if (!ok) return 1;
  printf("copy: %zu MiB in each of %d processes at once\n", mib, procs);
  for (int way = 0; way < kCopyWays; ++way) {
    std::vector<double> t(sh->seconds[way], sh->seconds[way] + kCopyRounds);
    std::sort(t.begin(), t.end());
    printf("  %-18s median %8.2f ms  best %8.2f ms  (%.2f GB/s per process)\n", names[way], t[kCopyRounds / 2] * 1e3,
           t[0] * 1e3, static_cast<double>(bytes) / t[0] / 1e9);
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  std::string what = argc > 1 ? argv[1] : "";
  if (what == "arrive") return arrive(argc > 2 ? atoi(argv[2]) : 4, argc > 3 ? atol(argv[3]) : 200000);
  if (what == "copy") return copy(argc > 2 ? strtoul(argv[2], nullptr, 10) : 32, argc > 3 ? atoi(argv[3]) : 2);
  fprintf(stderr, "usage: xc-machine-floor arrive [PROCS] [ROUNDS] | copy [MIB] [PROCS]\n");
  return 2;
}
