// xc-bench: what the subcommands share (errors, clocks, argument parsing).
// Each subcommand lives in its own file and is one entry of the table in
// main.cc (the collectives are one entry each of the table in coll.cc).
#pragma once

#include <cstddef>
#include <cstdio>
#include <vector>

#include "xcomm.h"

namespace xcb {

extern const char *g_prog;  // "xc-bench"
extern int g_rank;          // this process's world rank once known, else -1

// Print "xc-bench: rank R: CALL failed: ..." with xc_last_error() and exit(1).
[[noreturn]] void die(const char *call, xc_result_t rc);

#define BENCH_CHECK(call)                                   \
  do {                                                      \
    xc_result_t bench_rc_ = (call);                         \
    if (bench_rc_ != XC_SUCCESS) ::xcb::die(#call, bench_rc_); \
  } while (0)

// CLOCK_MONOTONIC in microseconds.
double now_us();

// xc_init timed on this rank (from call to return: it includes waiting for
// the last rank at the rendezvous); sets g_rank and *size. Exits on failure.
xc_comm_t timed_init(double *init_us, int *size);

// The slowest rank's value (allreduce MAX).
double max_over_ranks(double local, xc_comm_t comm);
// The sum over ranks (allreduce SUM, in float64: exact below 2^53).
double sum_over_ranks(double local, xc_comm_t comm);

struct Stats {
  double min = 0, avg = 0, max = 0;
  size_t count = 0;
};
Stats summarize(const std::vector<double> &samples);

// A decimal int in [min, 1000000]; false on anything else.
bool parse_count(const char *text, int min, int *out);
// A byte count with an optional K/M/G suffix (powers of 1024).
bool parse_bytes(const char *text, size_t *out);

// Subcommands (argc/argv: what follows the subcommand's name).
int run_comm(int argc, char **argv);
int run_pingpong(int argc, char **argv);
int run_shrink(int argc, char **argv);

// Collective subcommands, driven by the table in coll.cc.
struct CollSpec;
const CollSpec *find_coll(const char *name);
int run_coll(const CollSpec &spec, int argc, char **argv);
// One "  NAME  SUMMARY" line per collective, for the top-level usage.
void list_colls(FILE *to);

}  // namespace xcb
