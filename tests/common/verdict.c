/* A fault test rank's verdict (verdict.h). */
#define _POSIX_C_SOURCE 200809L
#include "verdict.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *verdict_dir = ".";
int verdict_rank = -1;
static char g_report[16384];

int64_t verdict_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void vwrite_file(const char *name, const char *fmt, va_list ap) {
  char path[4096], tmp[4200];
  FILE *f;
  snprintf(path, sizeof path, "%s/%s", verdict_dir, name);
  snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid());
  f = fopen(tmp, "w");
  if (!f) {
    fprintf(stderr, "[rank %d] cannot write %s\n", verdict_rank, tmp);
    exit(1);
  }
  vfprintf(f, fmt, ap);
  fclose(f);
  rename(tmp, path);
}

void verdict_write_file(const char *name, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vwrite_file(name, fmt, ap);
  va_end(ap);
}

void verdict_report(const char *fmt, ...) {
  size_t used = strlen(g_report);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_report + used, sizeof g_report - used, fmt, ap);
  va_end(ap);
  used = strlen(g_report);
  if (used + 1 < sizeof g_report) strcat(g_report, "\n");
}

const char *verdict_report_text(void) { return g_report; }

void verdict_fail(const char *fmt, ...) {
  char why[2048], name[64];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  fprintf(stderr, "[rank %d] FAIL: %s\n", verdict_rank, why);
  snprintf(name, sizeof name, "rank%d.fail", verdict_rank);
  verdict_write_file(name, "%sFAIL: %s\n", g_report, why);
  exit(1);
}

void verdict_pass(void) {
  char name[64];
  snprintf(name, sizeof name, "rank%d.ok", verdict_rank);
  verdict_write_file(name, "%s", g_report);
}
