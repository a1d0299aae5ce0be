// Unit tests of launcher detection: each launcher's environment, the order in
// which they win, malformed values, a missing rendezvous address, and the
// derived token and job id that every rank must compute alike.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "unit_test.h"

#include "bootstrap/launcher.h"
#include "bootstrap/store.h"

extern char **environ;

using namespace xc;
using namespace xc::bootstrap;

namespace {



// Removes every variable any launcher (or xcrun) could have set, including
// the ones of the CI job running this test.
int clear_env(void **) {
  static const char *const kPrefixes[] = {"XC_", "SLURM_", "OMPI_", "PMI_", "PMIX_", "TORCHELASTIC_"};
  static const char *const kNames[] = {"RANK",        "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
                                       "MASTER_ADDR", "MASTER_PORT", "MPI_LOCALRANKID", "GROUP_WORLD_SIZE"};
  std::vector<std::string> doomed;
  for (char **e = environ; *e; ++e) {
    std::string kv = *e;
    std::string name = kv.substr(0, kv.find('='));
    if (name == "XC_DEBUG" || name == "XC_DEBUG_FILE") continue;
    bool hit = false;
    for (const char *p : kPrefixes) hit = hit || name.rfind(p, 0) == 0;
    for (const char *n : kNames) hit = hit || name == n;
    if (hit) doomed.push_back(name);
  }
  for (const std::string &n : doomed) unsetenv(n.c_str());
  return 0;
}

void set(const char *name, const char *value) { setenv(name, value, 1); }

LaunchInfo detect_ok() {
  LaunchInfo info;
  ASSERT_OK(detect_launch(&info));
  return info;
}

bool is_hex32(const std::string &s) {
  if (s.size() != kTokenBytes) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

bool valid_job_id(const std::string &s) {
  if (s.empty() || s.size() > 24) return false;
  for (char c : s)
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

void test_none(void **) {
  LaunchInfo info = detect_ok();
  assert_string_equal(info.launcher.c_str(), "none");
  assert_int_equal(info.rank, 0);
  assert_int_equal(info.size, 1);
  assert_int_equal(info.local_rank_hint, -1);
  assert_true(info.store_host.empty());
  assert_int_equal(info.store_port, 0);
  assert_int_equal(info.store_fd, -1);
  assert_true(is_hex32(info.token));
  assert_true(valid_job_id(info.job_id));
  // Two single processes do not share segment names.
  assert_true(detect_ok().job_id != info.job_id);
}

// Nodes in blocks (xcrun --nnodes, torchrun): ranks per node for the
// start-up timeout's message; a layout that does not add up is an error
// under xcrun, ignored under torchrun (elastic sizes).
void test_node_layout(void **) {
  set("XC_RANK", "5");
  set("XC_SIZE", "6");
  set("XC_LOCAL_RANK", "1");
  set("XC_STORE_ADDR", "node0:1234");
  assert_int_equal(detect_ok().ranks_per_node, 0);  // one node: no layout
  set("XC_NNODES", "3");
  set("XC_NODE_RANK", "2");
  set("XC_LOCAL_SIZE", "2");
  assert_int_equal(detect_ok().ranks_per_node, 2);
  set("XC_LOCAL_SIZE", "4");
  LaunchInfo info;
  expect_error(detect_launch(&info), XC_ERR_INVALID_ARGUMENT, "XC_NNODES=3 nodes of XC_LOCAL_SIZE=4 ranks do not make 6");
  clear_env(nullptr);
  set("RANK", "5");
  set("WORLD_SIZE", "8");
  set("LOCAL_RANK", "1");
  set("LOCAL_WORLD_SIZE", "4");
  set("MASTER_ADDR", "node0");
  set("MASTER_PORT", "29500");
  assert_int_equal(detect_ok().ranks_per_node, 0);  // no GROUP_WORLD_SIZE
  set("GROUP_WORLD_SIZE", "2");
  assert_int_equal(detect_ok().ranks_per_node, 4);
  set("GROUP_WORLD_SIZE", "3");
  assert_int_equal(detect_ok().ranks_per_node, 0);
}

void test_xcrun(void **) {
  set("XC_RANK", "2");
  set("XC_SIZE", "4");
  set("XC_LOCAL_RANK", "0");
  set("XC_STORE_ADDR", "node1:1234");
  set("XC_STORE_TOKEN", "secret-token");
  set("XC_JOB_ID", "job_1-A");
  set("XC_STORE_FD", "5");
  // Lower-precedence launchers around it do not matter.
  set("RANK", "0");
  set("WORLD_SIZE", "1");
  set("SLURM_PROCID", "0");
  set("SLURM_NTASKS", "1");
  LaunchInfo info = detect_ok();
  assert_string_equal(info.launcher.c_str(), "xcrun");
  assert_int_equal(info.rank, 2);
  assert_int_equal(info.size, 4);
  assert_int_equal(info.local_rank_hint, 0);
  assert_string_equal(info.store_host.c_str(), "node1");
  assert_int_equal(info.store_port, 1234);
  assert_string_equal(info.token.c_str(), "secret-token");
  assert_string_equal(info.job_id.c_str(), "job_1-A");
  assert_int_equal(info.store_fd, -1);  // only rank 0 serves
  set("XC_RANK", "0");
  assert_int_equal(detect_ok().store_fd, 5);

  unsetenv("XC_SIZE");
  LaunchInfo untouched;
  untouched.rank = 42;
  expect_error(detect_launch(&untouched), XC_ERR_INVALID_ARGUMENT, "XC_SIZE");
  assert_int_equal(untouched.rank, 42);  // outputs are left alone on failure
  set("XC_SIZE", "4");
  unsetenv("XC_STORE_ADDR");
  expect_error(detect_launch(&untouched), XC_ERR_INVALID_USAGE, "set XC_STORE_ADDR=host:port");
}

void test_torchrun(void **) {
  set("RANK", "1");
  set("WORLD_SIZE", "2");
  set("LOCAL_RANK", "1");
  set("MASTER_ADDR", "10.0.0.1");
  set("MASTER_PORT", "29500");
  set("TORCHELASTIC_RUN_ID", "abc");
  // torchrun inside a Slurm allocation or an mpirun: torchrun wins.
  set("OMPI_COMM_WORLD_RANK", "0");
  set("OMPI_COMM_WORLD_SIZE", "1");
  set("SLURM_PROCID", "0");
  set("SLURM_NTASKS", "1");
  LaunchInfo info = detect_ok();
  assert_string_equal(info.launcher.c_str(), "torchrun");
  assert_int_equal(info.rank, 1);
  assert_int_equal(info.size, 2);
  assert_int_equal(info.local_rank_hint, 1);
  assert_string_equal(info.store_host.c_str(), "10.0.0.1");
  assert_int_equal(info.store_port, 29500);
  assert_true(is_hex32(info.token));
  assert_true(valid_job_id(info.job_id));

  // torchrun's agent serves its own store on MASTER_PORT: ours goes next door.
  set("TORCHELASTIC_USE_AGENT_STORE", "True");
  assert_int_equal(detect_ok().store_port, 29501);
  unsetenv("TORCHELASTIC_USE_AGENT_STORE");

  set("MASTER_ADDR", "::1");
  assert_string_equal(detect_ok().store_host.c_str(), "::1");
  set("MASTER_ADDR", "[fe80::1]");
  assert_string_equal(detect_ok().store_host.c_str(), "fe80::1");

  // XC_STORE_ADDR overrides MASTER_ADDR/PORT.
  set("XC_STORE_ADDR", "[::1]:4000");
  info = detect_ok();
  assert_string_equal(info.store_host.c_str(), "::1");
  assert_int_equal(info.store_port, 4000);
  unsetenv("XC_STORE_ADDR");

  set("MASTER_PORT", "70000");
  expect_error(detect_launch(&info), XC_ERR_INVALID_ARGUMENT, "MASTER_PORT");
  unsetenv("MASTER_PORT");
  expect_error(detect_launch(&info), XC_ERR_INVALID_USAGE, "set XC_STORE_ADDR=host:port");
  set("WORLD_SIZE", "1");
  set("RANK", "0");
  set("LOCAL_RANK", "0");
  info = detect_ok();  // one rank needs no address
  assert_int_equal(info.size, 1);
  assert_true(info.store_host.empty());

  // RANK alone is not torchrun (too common a name).
  clear_env(nullptr);
  set("RANK", "3");
  assert_string_equal(detect_ok().launcher.c_str(), "none");
}

void test_openmpi(void **) {
  set("OMPI_COMM_WORLD_RANK", "3");
  set("OMPI_COMM_WORLD_SIZE", "8");
  set("OMPI_COMM_WORLD_LOCAL_RANK", "1");
  set("OMPI_MCA_ess_base_jobid", "1234");
  set("SLURM_PROCID", "0");  // mpirun inside an allocation: Open MPI wins
  set("SLURM_NTASKS", "1");
  LaunchInfo info;
  expect_error(detect_launch(&info), XC_ERR_INVALID_USAGE,
               "openmpi gives no rendezvous address for its 8 ranks: set XC_STORE_ADDR=host:port (served by rank 0)");
  set("XC_STORE_ADDR", "head:5000");
  info = detect_ok();
  assert_string_equal(info.launcher.c_str(), "openmpi");
  assert_int_equal(info.rank, 3);
  assert_int_equal(info.size, 8);
  assert_int_equal(info.local_rank_hint, 1);
  assert_string_equal(info.store_host.c_str(), "head");
  assert_int_equal(info.store_port, 5000);
}

void test_slurm(void **) {
  set("SLURM_PROCID", "1");
  set("SLURM_NTASKS", "2");
  set("SLURM_LOCALID", "0");
  set("SLURM_JOB_ID", "777");
  set("SLURM_STEP_ID", "0");
  set("PMI_RANK", "0");  // srun --mpi=pmi2 sets PMI_* too: Slurm wins
  set("PMI_SIZE", "1");
  LaunchInfo info;
  expect_error(detect_launch(&info), XC_ERR_INVALID_USAGE, "slurm gives no rendezvous address");
  set("XC_STORE_ADDR", "n01:6000");
  info = detect_ok();
  assert_string_equal(info.launcher.c_str(), "slurm");
  assert_int_equal(info.rank, 1);
  assert_int_equal(info.size, 2);
  assert_int_equal(info.local_rank_hint, 0);
  assert_true(info.job_id.rfind("slurm-", 0) == 0);
  // Older Slurm spells the size SLURM_NPROCS.
  unsetenv("SLURM_NTASKS");
  set("SLURM_NPROCS", "2");
  assert_int_equal(detect_ok().size, 2);
  unsetenv("SLURM_NPROCS");
  expect_error(detect_launch(&info), XC_ERR_INVALID_ARGUMENT, "SLURM_NTASKS");
}

void test_mpich(void **) {
  set("PMI_RANK", "0");
  set("PMI_SIZE", "3");
  set("MPI_LOCALRANKID", "0");
  set("XC_STORE_ADDR", "127.0.0.1:7000");
  LaunchInfo info = detect_ok();
  assert_string_equal(info.launcher.c_str(), "mpich");
  assert_int_equal(info.rank, 0);
  assert_int_equal(info.size, 3);
  assert_int_equal(info.local_rank_hint, 0);
  assert_string_equal(info.store_host.c_str(), "127.0.0.1");
}

void test_bad_values(void **) {
  struct Case {
    const char *rank, *size, *local, *expect;
  } cases[] = {
      {"abc", "4", nullptr, "RANK='abc'"},   {"1x", "4", nullptr, "RANK='1x'"},
      {" 1", "4", nullptr, "RANK=' 1'"},     {"1", "0", nullptr, "WORLD_SIZE=0"},
      {"1", "-2", nullptr, "WORLD_SIZE=-2"}, {"4", "4", nullptr, "RANK=4"},
      {"-1", "4", nullptr, "RANK=-1"},       {"1", "99999999999", nullptr, "WORLD_SIZE='99999999999'"},
      {"1", "2", "7", "LOCAL_RANK=7"},       {"1", "2", "x", "LOCAL_RANK='x'"},
  };
  for (const Case &c : cases) {
    clear_env(nullptr);
    set("RANK", c.rank);
    set("WORLD_SIZE", c.size);
    if (c.local) set("LOCAL_RANK", c.local);
    set("XC_STORE_ADDR", "h:1");
    LaunchInfo info;
    expect_error(detect_launch(&info), XC_ERR_INVALID_ARGUMENT, c.expect);
  }
  clear_env(nullptr);
  set("XC_RANK", "0");
  set("XC_SIZE", "2");
  const char *bad_addrs[] = {"host", "host:", ":80", "host:0", "host:65536", "host:8o", "::1:80", "[::1]80", "[]:80"};
  for (const char *a : bad_addrs) {
    set("XC_STORE_ADDR", a);
    LaunchInfo info;
    expect_error(detect_launch(&info), XC_ERR_INVALID_ARGUMENT, "XC_STORE_ADDR");
  }
  set("XC_STORE_ADDR", "h:1");
  LaunchInfo info;
  set("XC_JOB_ID", "bad/name");
  expect_error(detect_launch(&info), XC_ERR_INVALID_ARGUMENT, "XC_JOB_ID='bad/name'");
  set("XC_JOB_ID", "a-very-long-job-name-over-24");
  expect_error(detect_launch(&info), XC_ERR_INVALID_ARGUMENT, "XC_JOB_ID");
  unsetenv("XC_JOB_ID");
  set("XC_STORE_FD", "-3");
  expect_error(detect_launch(&info), XC_ERR_INVALID_ARGUMENT, "XC_STORE_FD");
  set("XC_STORE_FD", "three");
  expect_error(detect_launch(&info), XC_ERR_INVALID_ARGUMENT, "XC_STORE_FD='three'");
  unsetenv("XC_STORE_FD");
  set("XC_STORE_TOKEN", "has space");
  expect_error(detect_launch(&info), XC_ERR_INVALID_ARGUMENT, "XC_STORE_TOKEN");
  expect_error(detect_launch(nullptr), XC_ERR_INVALID_ARGUMENT, "NULL");
}

// Every rank of a job derives the same token and job id; another job does not.
void check_agreement(const char *rank_var, const char *job_var, const char *job_value) {
  std::string token, job;
  for (int r = 0; r < 4; ++r) {
    set(rank_var, std::to_string(r).c_str());
    LaunchInfo info = detect_ok();
    assert_int_equal(info.rank, r);
    assert_true(is_hex32(info.token));
    assert_true(valid_job_id(info.job_id));
    if (r == 0) {
      token = info.token;
      job = info.job_id;
    } else {
      assert_string_equal(info.token.c_str(), token.c_str());
      assert_string_equal(info.job_id.c_str(), job.c_str());
    }
  }
  if (job_var) {
    set(job_var, job_value);
    LaunchInfo other = detect_ok();
    assert_true(other.token != token);
    assert_true(other.job_id != job);
  }
  // XC_STORE_TOKEN, when given, is used as it is.
  set("XC_STORE_TOKEN", "given");
  assert_string_equal(detect_ok().token.c_str(), "given");
  unsetenv("XC_STORE_TOKEN");
}

void test_token_agreement(void **) {
  set("SLURM_NTASKS", "4");
  set("SLURM_JOB_ID", "100");
  set("SLURM_STEP_ID", "0");
  set("SLURM_LOCALID", "0");
  set("XC_STORE_ADDR", "n01:6000");
  check_agreement("SLURM_PROCID", "SLURM_STEP_ID", "1");  // another step of the same job

  clear_env(nullptr);
  set("WORLD_SIZE", "4");
  set("MASTER_ADDR", "host");
  set("MASTER_PORT", "29500");
  set("TORCHELASTIC_RUN_ID", "run1");
  check_agreement("RANK", "TORCHELASTIC_RESTART_COUNT", "1");

  clear_env(nullptr);
  set("OMPI_COMM_WORLD_SIZE", "4");
  set("PMIX_NAMESPACE", "prterun-host-1@1");
  set("XC_STORE_ADDR", "n01:6000");
  check_agreement("OMPI_COMM_WORLD_RANK", "PMIX_NAMESPACE", "prterun-host-2@1");

  clear_env(nullptr);
  set("PMI_SIZE", "4");
  set("XC_STORE_ADDR", "n01:6000");  // no job identity: the address alone
  check_agreement("PMI_RANK", "XC_STORE_ADDR", "n01:6001");

  clear_env(nullptr);
  set("XC_SIZE", "4");
  set("XC_STORE_ADDR", "n01:6000");
  check_agreement("XC_RANK", "XC_STORE_ADDR", "n02:6000");
}

void test_parse_host_port(void **) {
  std::string host;
  uint16_t port = 0;
  ASSERT_OK(parse_host_port("node-1.example.com:29500", &host, &port));
  assert_string_equal(host.c_str(), "node-1.example.com");
  assert_int_equal(port, 29500);
  ASSERT_OK(parse_host_port("10.1.2.3:1", &host, &port));
  assert_string_equal(host.c_str(), "10.1.2.3");
  assert_int_equal(port, 1);
  ASSERT_OK(parse_host_port("[::1]:65535", &host, &port));
  assert_string_equal(host.c_str(), "::1");
  assert_int_equal(port, 65535);
  ASSERT_OK(parse_host_port("[fe80::1%eth0]:80", &host, &port));
  assert_string_equal(host.c_str(), "fe80::1%eth0");
  const char *bad[] = {"", "host", "host:", ":1", "host:0", "host:65536", "host:-1", "host:+80", "host:1 ",
                       "::1:80", "[::1]", "[::1]:", "[::1:80", "[host]:80", "ho st:80", "host:123456"};
  for (const char *b : bad) {
    host = "untouched";
    port = 7;
    Status s = parse_host_port(b, &host, &port);
    if (s.ok()) fail_msg("'%s' was accepted", b);
    assert_int_equal(s.code(), XC_ERR_INVALID_ARGUMENT);
    assert_string_equal(host.c_str(), "untouched");
    assert_int_equal(port, 7);
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_none, clear_env),
      cmocka_unit_test_setup(test_xcrun, clear_env),
      cmocka_unit_test_setup(test_node_layout, clear_env),
      cmocka_unit_test_setup(test_torchrun, clear_env),
      cmocka_unit_test_setup(test_openmpi, clear_env),
      cmocka_unit_test_setup(test_slurm, clear_env),
      cmocka_unit_test_setup(test_mpich, clear_env),
      cmocka_unit_test_setup(test_bad_values, clear_env),
      cmocka_unit_test_setup(test_token_agreement, clear_env),
      cmocka_unit_test_setup(test_parse_host_port, clear_env),
  };
  return cmocka_run_group_tests_name("bootstrap launcher", tests, nullptr, nullptr);
}
