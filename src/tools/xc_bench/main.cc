// xc-bench: benchmarks of xcomm, run under a launcher like any xcomm program
// (`xcrun -n 8 xc-bench comm`). One subcommand per family of measurements;
// each is a function over the command line that follows its name. It uses
// the public header only, so it measures exactly what applications get.
//
//   comm       world start-up (xc_init), xc_comm_split and xc_comm_split_groups
//   pingpong   point-to-point latency and bandwidth between ranks 0 and 1
//   shrink     recovery from a killed rank (revoke + shrink), beside xc_init
//   allreduce, broadcast, allgather, barrier, ...
//              nccl-tests-style sweeps of one collective (coll.cc; one table
//              entry per collective)
//
// Timing rules, for every subcommand: CLOCK_MONOTONIC; a barrier before each
// timed step so every rank starts it together; a step's time is the slowest
// rank's (allreduce MAX), because a collective is over only when its last
// rank is done; rank 0 alone prints.

#include <cstdio>
#include <string>

#include "bench.h"

namespace xcb {
namespace {

struct Subcommand {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv);
};

const Subcommand kSubcommands[] = {
    {"comm", "time world start-up, xc_comm_split and xc_comm_split_groups", run_comm},
    {"pingpong", "point-to-point latency and bandwidth between ranks 0 and 1", run_pingpong},
    {"shrink", "recovery from a killed rank (xcrun --keep-going): revoke + shrink, beside xc_init", run_shrink},
};

void usage(FILE *to) {
  fprintf(to, "usage: %s SUBCOMMAND [OPTIONS]   (run it under a launcher, e.g. xcrun -n 8 %s comm)\n\n", g_prog,
          g_prog);
  fprintf(to, "subcommands:\n");
  for (const Subcommand &s : kSubcommands) fprintf(to, "  %-15s %s\n", s.name, s.summary);
  list_colls(to);
  fprintf(to, "\n'%s SUBCOMMAND -h' describes one.\n", g_prog);
}

}  // namespace
}  // namespace xcb

int main(int argc, char **argv) {
  using namespace xcb;
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  std::string cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    usage(stdout);
    return 0;
  }
  for (const Subcommand &s : kSubcommands)
    if (cmd == s.name) return s.run(argc - 2, argv + 2);
  if (const CollSpec *coll = find_coll(argv[1])) return run_coll(*coll, argc - 2, argv + 2);
  fprintf(stderr, "%s: unknown subcommand '%s'\n\n", g_prog, argv[1]);
  usage(stderr);
  return 2;
}
