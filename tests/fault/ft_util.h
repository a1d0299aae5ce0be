/* What the fault-tolerance tests (ft.c) share: checks that fail the rank
   with a message (verdict.h: the report, DIR, the clock), a SIGKILL of
   this process that records its moment, and the recovery every survivor
   runs (revoke, shrink until a child works everywhere). */
#ifndef XCOMM_FT_UTIL_H
#define XCOMM_FT_UTIL_H

#include <stdint.h>

#include "verdict.h"
#include "xcomm.h"

#define FT_EXPECT(cond, ...)                \
  do {                                      \
    if (!(cond)) verdict_fail(__VA_ARGS__); \
  } while (0)
#define FT_CHECK(call)                                                                                   \
  do {                                                                                                   \
    xc_result_t ft_rc_ = (call);                                                                         \
    if (ft_rc_ != XC_SUCCESS)                                                                            \
      verdict_fail("%s:%d: %s -> %s (%s)", __FILE__, __LINE__, #call, xc_strerror(ft_rc_), xc_last_error()); \
  } while (0)
/* Record the moment in DIR/killed<r>.time and SIGKILL this process. */
void ft_die(void);
/* The moment rank r recorded before it died (0 when it never did). */
int64_t ft_death_time(int r);

/* An allreduce (sum of rank-dependent int64s) on comm, checked: 1 when it
   succeeded with the right result. */
int ft_allreduce_ok(xc_comm_t comm, uint64_t salt);
/* Revoke comm and shrink it until a child works on every survivor (an
   allreduce in it succeeds everywhere, as agreed by xc_comm_agree); frees
   the intermediate children, not comm. *shrinks counts the shrinks. */
xc_comm_t ft_recover(xc_comm_t comm, int *shrinks);
/* The world ranks of comm's members, in order (world ranks are passed
   around by an allgather on comm); n = comm's size. */
void ft_members(xc_comm_t comm, int *world_ranks, int n);
/* comm must hold exactly the world ranks 0 .. world_size - 1 except those
   with dead[r] set, in order. */
void ft_check_survivors(xc_comm_t comm, const int *dead, int world_size);

/* The quick collective matrix (every op x dtype x valid reduction x
   placement, two roots, a few counts) on comm, checked against a reference
   computed locally; returns the number of cases (ft_matrix.c). */
size_t ft_matrix(xc_comm_t comm, uint64_t seed);

#endif
