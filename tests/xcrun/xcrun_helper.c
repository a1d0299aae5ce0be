/* A rank program for the xcrun tests: each mode checks or does one thing and
 * says so through its exit status and output. Ranks that must wait for xcrun
 * to stop them block in pause(), never in a timed sleep. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int g_rank = -1;
static int g_failed = 0;

static void fail(const char *what, const char *detail) {
  fprintf(stderr, "helper rank %d: %s%s%s\n", g_rank, what, detail ? ": " : "", detail ? detail : "");
  g_failed = 1;
}

static const char *env(const char *name) {
  const char *v = getenv(name);
  if (!v) fail("variable not set", name);
  return v ? v : "";
}

static int env_int(const char *name) {
  const char *v = env(name);
  char *end = NULL;
  long n = strtol(v, &end, 10);
  if (!*v || *end) {
    fail("not a number", name);
    return -1;
  }
  return (int)n;
}

static void expect_int(const char *name, int want) {
  if (env_int(name) != want) {
    char buf[128];
    snprintf(buf, sizeof buf, "%s=%s, want %d", name, env(name), want);
    fail("wrong value", buf);
  }
}

static void expect_str(const char *name, const char *want) {
  if (strcmp(env(name), want) != 0) fail("wrong value", name);
}

static void block_forever(void) {
  for (;;) pause();
}

/* Port of an fd's bound address, or -1 if it is no IPv4 socket. */
static int socket_port(int fd) {
  struct sockaddr_in a;
  socklen_t len = sizeof a;
  if (getsockname(fd, (struct sockaddr *)&a, &len) != 0 || a.sin_family != AF_INET) return -1;
  return ntohs(a.sin_port);
}

/* How many of this process's fds are sockets bound to port. */
static int fds_on_port(int port) {
  int count = 0;
  DIR *d = opendir("/proc/self/fd");
  struct dirent *e;
  if (!d) return -1;
  while ((e = readdir(d)) != NULL) {
    int fd = atoi(e->d_name);
    if (e->d_name[0] != '.' && fd != dirfd(d) && socket_port(fd) == port) ++count;
  }
  closedir(d);
  return count;
}

/* Whether process pid holds an fd naming socket inode ino. */
static int process_holds_socket(pid_t pid, unsigned long ino) {
  char dir[64], want[64], path[512], link[128];
  DIR *d;
  struct dirent *e;
  int found = 0;
  snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
  snprintf(want, sizeof want, "socket:[%lu]", ino);
  if (!(d = opendir(dir))) return 0;
  while ((e = readdir(d)) != NULL) {
    ssize_t n;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    n = readlink(path, link, sizeof link - 1);
    if (n > 0) {
      link[n] = '\0';
      if (strcmp(link, want) == 0) found = 1;
    }
  }
  closedir(d);
  return found;
}

/* The rendezvous socket: a listening one, in rank 0 only, and xcrun lets go
 * of its copy once every rank is started (polled for, with a deadline). */
static void check_store_fd(int port) {
  const char *fdtext = getenv("XC_STORE_FD");
  if (g_rank != 0) {
    if (fdtext) fail("XC_STORE_FD set outside rank 0", fdtext);
    if (fds_on_port(port) != 0) fail("a socket on the store port is open outside rank 0", NULL);
    return;
  }
  if (!fdtext) {
    fail("XC_STORE_FD not set in rank 0", NULL);
    return;
  }
  int fd = atoi(fdtext), listening = 0;
  socklen_t len = sizeof listening;
  struct stat st;
  if (fd < 3 || fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) {
    fail("XC_STORE_FD is not an open socket", fdtext);
    return;
  }
  if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening)
    fail("XC_STORE_FD is not listening", fdtext);
  if (socket_port(fd) != port) fail("XC_STORE_FD is not bound to the store port", fdtext);
  if (fds_on_port(port) != 1) fail("rank 0 holds more than one socket on the store port", NULL);
  for (int i = 0; i < 500 && process_holds_socket(getppid(), st.st_ino); ++i) {
    struct timespec ms10 = {0, 10 * 1000 * 1000};
    nanosleep(&ms10, NULL);
  }
  if (process_holds_socket(getppid(), st.st_ino)) fail("xcrun still holds the listening socket", NULL);
}

/* Rank 0 can bind 127.0.0.1:port (as torch's TCPStore will). */
static void check_port_free(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) {
    fail("socket", strerror(errno));
    return;
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons((uint16_t)port);
  if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(fd, 1) != 0)
    fail("MASTER_PORT cannot be bound", strerror(errno));
  close(fd);
}

/* env N [VAR=VALUE...]: every variable xcrun promises, checked in each rank.
 * Prints what all ranks must share, for the script to compare. */
static int mode_env(int argc, char **argv) {
  int n = argc > 0 ? atoi(argv[0]) : -1;
  char want_addr[64];
  const char *p;
  g_rank = env_int("XC_RANK");
  if (g_rank < 0 || g_rank >= n) fail("XC_RANK out of range", env("XC_RANK"));
  expect_int("XC_SIZE", n);
  expect_int("XC_LOCAL_RANK", g_rank);
  expect_int("XC_LOCAL_SIZE", n);
  expect_int("RANK", g_rank);
  expect_int("WORLD_SIZE", n);
  expect_int("LOCAL_RANK", g_rank);
  expect_int("LOCAL_WORLD_SIZE", n);
  expect_str("MASTER_ADDR", "127.0.0.1");
  int master = env_int("MASTER_PORT");
  if (master <= 0 || master > 65535) fail("MASTER_PORT out of range", env("MASTER_PORT"));
  const char *store = env("XC_STORE_ADDR");
  if (strncmp(store, "127.0.0.1:", 10) != 0) fail("XC_STORE_ADDR is not on 127.0.0.1", store);
  int port = atoi(store + 10);
  if (port <= 0 || port > 65535) fail("XC_STORE_ADDR's port out of range", store);
  snprintf(want_addr, sizeof want_addr, "127.0.0.1:%d", port);
  expect_str("XC_STORE_ADDR", want_addr);
  /* MASTER_PORT is for the program's own server (torch's TCPStore, bound by
     rank 0): never xcrun's store, and free to bind. */
  if (master == port) fail("MASTER_PORT is the port of xcrun's store", env("MASTER_PORT"));
  if (g_rank == 0) check_port_free(master);
  const char *token = env("XC_STORE_TOKEN");
  if (strlen(token) != 32) fail("XC_STORE_TOKEN is not 32 characters", token);
  for (p = token; *p; ++p)
    if (!isxdigit((unsigned char)*p)) fail("XC_STORE_TOKEN is not hex", token);
  const char *job = env("XC_JOB_ID");
  if (!*job || strlen(job) > 64) fail("XC_JOB_ID empty or long", job);
  for (p = job; *p; ++p)
    if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-') fail("XC_JOB_ID has a bad character", job);
  for (int i = 1; i < argc; ++i) {
    char *eq = strchr(argv[i], '=');
    if (!eq) continue;
    *eq = '\0';
    expect_str(argv[i], eq + 1);
  }
  check_store_fd(port);
  printf("rank=%d token=%s job=%s port=%d master=%d\n", g_rank, token, job, port, master);
  return g_failed;
}

/* print: a line on each stream and an unfinished last line on stdout. */
static int mode_print(void) {
  printf("out line from %s\n", env("XC_RANK"));
  printf("partial %s", env("XC_RANK"));
  fprintf(stderr, "err line from %s\n", env("XC_RANK"));
  return 0;
}

/* fail R CODE / sigkill R: rank R fails at once, the others block until
 * xcrun stops them. stubborn R [FIFO]: the others ignore SIGTERM, so only
 * SIGKILL ends them; with FIFO, rank R fails only after each of them has
 * written a byte into it to say SIGTERM is ignored. */
static int wait_for_bytes(const char *fifo, int count) {
  char c;
  int fd = open(fifo, O_RDWR); /* also a writer: no EOF between the others */
  if (fd < 0) return -1;
  for (int got = 0; got < count;) {
    ssize_t n = read(fd, &c, 1);
    if (n == 1) ++got;
    else if (n < 0 && errno != EINTR) return -1;
  }
  close(fd);
  return 0;
}

static int mode_fail(const char *mode, int argc, char **argv) {
  int victim = argc > 0 ? atoi(argv[0]) : 0;
  int stubborn = strcmp(mode, "stubborn") == 0;
  const char *fifo = stubborn && argc > 1 ? argv[1] : NULL;
  g_rank = env_int("XC_RANK");
  if (g_rank == victim) {
    if (strcmp(mode, "sigkill") == 0) raise(SIGKILL);
    if (fifo && wait_for_bytes(fifo, env_int("XC_SIZE") - 1) != 0) return 9;
    return !stubborn && argc > 1 ? atoi(argv[1]) : 5;
  }
  if (stubborn) {
    signal(SIGTERM, SIG_IGN);
    if (fifo) {
      int fd = open(fifo, O_WRONLY);
      if (fd < 0 || write(fd, "r", 1) != 1) return 9;
      close(fd);
    }
  }
  block_forever();
  return 0;
}

static char g_record_path[4096];

static void record_signal(int sig) {
  char text[16];
  int len = snprintf(text, sizeof text, "%d\n", sig);
  int fd = open(g_record_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    ssize_t ignored = write(fd, text, (size_t)len);
    (void)ignored;
    close(fd);
  }
  _exit(0);
}

/* record DIR FIFO: note which signal arrives in DIR/sig.RANK; one byte into
 * FIFO says the handler is in place. */
static int mode_record(int argc, char **argv) {
  if (argc < 2) return 2;
  g_rank = env_int("XC_RANK");
  snprintf(g_record_path, sizeof g_record_path, "%s/sig.%d", argv[0], g_rank);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = record_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  int fd = open(argv[1], O_WRONLY);
  if (fd < 0 || write(fd, "r", 1) != 1) return 3;
  close(fd);
  block_forever();
  return 0;
}

/* shm FAILRANK: leave segments behind as a crashed job would. With FAILRANK
 * >= 0 that rank makes one for every rank and exits 1 while the others
 * block (so all exist before xcrun stops anyone); with -1 each rank makes
 * its own and exits 0. Prints the paths. */
static int make_segment(int owner) {
  char path[512];
  snprintf(path, sizeof path, "/dev/shm/xcomm-%s-test-%d", env("XC_JOB_ID"), owner);
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) {
    perror(path);
    return 3;
  }
  close(fd);
  printf("%s\n", path);
  fflush(stdout);
  return 0;
}

static int mode_shm(int argc, char **argv) {
  int victim = argc > 0 ? atoi(argv[0]) : -1;
  g_rank = env_int("XC_RANK");
  if (victim < 0) return make_segment(g_rank);
  if (g_rank != victim) block_forever();
  for (int r = 0; r < env_int("XC_SIZE"); ++r)
    if (make_segment(r) != 0) return 3;
  return 1;
}

/* stdin: print what standard input holds (rank 0 gets xcrun's, the others
 * /dev/null). */
static int mode_stdin(void) {
  char buf[256];
  size_t n = fread(buf, 1, sizeof buf - 1, stdin);
  buf[n] = '\0';
  printf("rank %s read [%s]\n", env("XC_RANK"), buf);
  return 0;
}

/* args ...: print the arguments, one per line, to show they pass unchanged. */
static int mode_args(int argc, char **argv) {
  for (int i = 0; i < argc; ++i) printf("%s\n", argv[i]);
  return 0;
}

/* affinity: one line with the rank, the cpus it may run on (as the kernel
 * lists them in /proc/self/status) and its XC_LOCAL_GPU / XC_LOCAL_NIC
 * ("-" when unset). */
static int mode_affinity(void) {
  char line[4096], cpus[4096] = "?";
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return 3;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "Cpus_allowed_list: %4095s", cpus) == 1) break;
  fclose(f);
  const char *gpu = getenv("XC_LOCAL_GPU"), *nic = getenv("XC_LOCAL_NIC");
  printf("rank=%s cpus=%s gpu=%s nic=%s\n", env("XC_RANK"), cpus, gpu ? gpu : "-", nic ? nic : "-");
  return g_failed;
}

/* exec-default-sigint PROG ARGS: run PROG with SIGINT at its default, which
 * a shell's background job would otherwise ignore. */
static int mode_exec(char **argv) {
  signal(SIGINT, SIG_DFL);
  execvp(argv[0], argv);
  perror(argv[0]);
  return 127;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: xcrun_helper MODE [ARGS]\n");
    return 2;
  }
  const char *mode = argv[1];
  int rest_c = argc - 2;
  char **rest = argv + 2;
  if (strcmp(mode, "env") == 0) return mode_env(rest_c, rest);
  if (strcmp(mode, "print") == 0) return mode_print();
  if (strcmp(mode, "fail") == 0 || strcmp(mode, "sigkill") == 0 || strcmp(mode, "stubborn") == 0)
    return mode_fail(mode, rest_c, rest);
  if (strcmp(mode, "record") == 0) return mode_record(rest_c, rest);
  if (strcmp(mode, "pause") == 0) block_forever();
  if (strcmp(mode, "shm") == 0) return mode_shm(rest_c, rest);
  if (strcmp(mode, "stdin") == 0) return mode_stdin();
  if (strcmp(mode, "args") == 0) return mode_args(rest_c, rest);
  if (strcmp(mode, "affinity") == 0) return mode_affinity();
  if (strcmp(mode, "exec-default-sigint") == 0 && rest_c > 0) return mode_exec(rest);
  fprintf(stderr, "xcrun_helper: unknown mode %s\n", mode);
  return 2;
}
