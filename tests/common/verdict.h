/* How a rank of a multi-process fault test leaves its verdict for the
   script that runs it (fault_kill.sh, device_fault, ft): a report of the
   checks that passed, written to DIR/rank<r>.ok, or with the first check
   that failed to DIR/rank<r>.fail (and stderr), then exit 1. Files are
   written atomically, so a reader never sees half of one. */
#ifndef XCOMM_TEST_VERDICT_H
#define XCOMM_TEST_VERDICT_H

#include <stdint.h>

extern const char *verdict_dir; /* DIR; "." until set */
extern int verdict_rank;        /* this rank, -1 until known */

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t verdict_now_ns(void);
/* DIR/name, written atomically. */
void verdict_write_file(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Adds a line to this rank's report. */
void verdict_report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The report so far. */
const char *verdict_report_text(void);
/* DIR/rank<r>.fail with the report so far and why; exit 1. */
void verdict_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* DIR/rank<r>.ok with the report. */
void verdict_pass(void);

#endif
