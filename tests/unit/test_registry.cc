// The transport table (transport/registry.h) with two made-up entries over a
// real bootstrap store, ranks played by threads: each peer goes to the first
// entry that reaches it, set-up runs in step (every rank's create before any
// connect, every connect before any finish), and a rank that no entry
// reaches still joins the barriers, so the others finish.
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "unit_test.h"

#include "bootstrap/store.h"
#include "fake_transport.h"
#include "transport/registry.h"

using namespace xc;

namespace {

const char *kToken = "0123456789abcdef0123456789abcdef";

// What the made-up entries saw, across all ranks of one test.
struct Recorder {
  std::mutex mu;
  std::map<std::pair<int, std::string>, std::vector<int>> peers;  // (rank, entry) → peers given to create
  std::map<const Transport *, std::string> made_by;
  int creates_expected = 0;  // in the whole job
  std::atomic<int> created{0}, connected{0};
  std::atomic<int> out_of_step{0};  // a connect before every create, or a finish before every connect
};
Recorder *g_rec = nullptr;
xc_fake::FakeHub *g_hub = nullptr;

class Connector final : public TransportConnector {
 public:
  Connector(const char *entry, int rank) : entry_(entry), t_(std::make_unique<xc_fake::FakeTransport>(*g_hub, rank)) {}
  Status connect() override {
    if (g_rec->created.load() != g_rec->creates_expected) ++g_rec->out_of_step;
    ++g_rec->connected;
    return Status::Ok();
  }
  std::unique_ptr<Transport> finish() override {
    if (g_rec->connected.load() != g_rec->creates_expected) ++g_rec->out_of_step;
    std::lock_guard<std::mutex> g(g_rec->mu);
    g_rec->made_by[t_.get()] = entry_;
    return std::move(t_);
  }

 private:
  const char *entry_;
  std::unique_ptr<xc_fake::FakeTransport> t_;
};

template <const char *kName>
Status create(const TransportSetup &setup, const std::vector<int> &peers, std::unique_ptr<TransportConnector> *out) {
  {
    std::lock_guard<std::mutex> g(g_rec->mu);
    g_rec->peers[{setup.rank, kName}] = peers;
  }
  ++g_rec->created;
  *out = std::make_unique<Connector>(kName, setup.rank);
  return Status::Ok();
}

char kNear[] = "near", kFar[] = "far";
bool same_host(const TransportSetup &s, int peer) {
  return s.host_of[static_cast<size_t>(peer)] == s.host_of[static_cast<size_t>(s.rank)];
}
bool anyone(const TransportSetup &, int) { return true; }
const TransportEntry kNearEntry = {kNear, same_host, create<kNear>};
const TransportEntry kFarEntry = {kFar, anyone, create<kFar>};

// Every rank of host_of sets up `table` on its own thread; their results.
std::vector<Transports> set_up_job(const std::vector<int> &host_of, const std::vector<const TransportEntry *> &table,
                                   std::vector<Status> *st) {
  int n = static_cast<int>(host_of.size());
  std::unique_ptr<bootstrap::StoreServer> server;
  ASSERT_OK(bootstrap::StoreServer::start("127.0.0.1", 0, -1, kToken, &server));
  std::vector<Transports> out(static_cast<size_t>(n));
  st->assign(static_cast<size_t>(n), Status::Ok());
  std::vector<std::thread> ranks;
  for (int r = 0; r < n; ++r) {
    ranks.emplace_back([&, r] {
      std::unique_ptr<bootstrap::StoreClient> store;
      Status s = bootstrap::StoreClient::connect("127.0.0.1", server->port(), kToken, Deadline::AfterMs(5000), &store);
      if (s.ok()) {
        TransportSetup setup;
        setup.rank = r;
        setup.size = n;
        setup.host_of = host_of;
        setup.job_id = "test";
        setup.token = kToken;
        setup.store = store.get();
        setup.deadline = Deadline::AfterMs(5000);
        s = connect_transports(setup, table, &out[static_cast<size_t>(r)]);
      }
      (*st)[static_cast<size_t>(r)] = s;
    });
  }
  for (auto &t : ranks) t.join();
  return out;
}

void first_entry_that_reaches_a_peer_carries_it(void **) {
  Recorder rec;
  xc_fake::FakeHubOptions ho;
  ho.ranks = 4;
  xc_fake::FakeHub hub(ho);
  g_rec = &rec;
  g_hub = &hub;
  const std::vector<int> host_of = {0, 0, 1, 1};
  rec.creates_expected = 8;  // every rank has a near peer and far peers
  std::vector<Status> st;
  std::vector<Transports> job = set_up_job(host_of, {&kNearEntry, &kFarEntry}, &st);
  for (const Status &s : st) ASSERT_OK(s);
  assert_int_equal(rec.out_of_step.load(), 0);
  for (int r = 0; r < 4; ++r) {
    const Transports &ts = job[static_cast<size_t>(r)];
    assert_int_equal(ts.owned.size(), 2);
    assert_null(ts.route[static_cast<size_t>(r)]);
    for (int p = 0; p < 4; ++p) {
      if (p == r) continue;
      const Transport *t = ts.route[static_cast<size_t>(p)];
      assert_non_null(t);
      assert_string_equal(rec.made_by[t].c_str(), host_of[static_cast<size_t>(p)] == host_of[static_cast<size_t>(r)] ? "near" : "far");
    }
  }
  // create heard of exactly the peers its entry won, ascending.
  assert_true((rec.peers[{0, "near"}] == std::vector<int>{1}));
  assert_true((rec.peers[{0, "far"}] == std::vector<int>{2, 3}));
  assert_true((rec.peers[{3, "near"}] == std::vector<int>{2}));
  assert_true((rec.peers[{3, "far"}] == std::vector<int>{0, 1}));
}

// Rank 2 is alone on its host: the only entry reaches nobody for it, yet
// ranks 0 and 1 finish set-up (they would time out in a barrier without it).
void rank_reaching_nobody_still_joins_the_barriers(void **) {
  Recorder rec;
  xc_fake::FakeHubOptions ho;
  ho.ranks = 3;
  xc_fake::FakeHub hub(ho);
  g_rec = &rec;
  g_hub = &hub;
  rec.creates_expected = 2;
  std::vector<Status> st;
  std::vector<Transports> job = set_up_job({0, 0, 1}, {&kNearEntry}, &st);
  for (const Status &s : st) ASSERT_OK(s);
  assert_int_equal(rec.out_of_step.load(), 0);
  assert_int_equal(job[2].owned.size(), 0);
  for (const Transport *t : job[2].route) assert_null(t);
  assert_non_null(job[0].route[1]);
  assert_null(job[0].route[2]);
  assert_true(rec.peers.find({2, "near"}) == rec.peers.end());
}

void job_of_one_sets_up_nothing(void **) {
  TransportSetup setup;
  setup.host_of = {0};
  Transports ts;
  ASSERT_OK(connect_transports(setup, transport_table(), &ts));  // no store is needed
  assert_int_equal(ts.owned.size(), 0);
  assert_int_equal(ts.route.size(), 1);
  assert_null(ts.route[0]);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(first_entry_that_reaches_a_peer_carries_it),
      cmocka_unit_test(rank_reaching_nobody_still_joins_the_barriers),
      cmocka_unit_test(job_of_one_sets_up_nothing),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
