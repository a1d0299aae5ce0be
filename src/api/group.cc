#include "api/group.h"

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "runtime/device_ops.h"

namespace xc::api {

namespace {

struct GroupItem {
  xc_request_s *p2p = nullptr;  // or
  std::shared_ptr<CollTask> coll;
  xc_status_t *status = nullptr;
  bool owned = false;
};

struct GroupState {
  int depth = 0;
  std::vector<GroupItem> items;
  std::vector<std::pair<xc_comm_t, std::vector<device::P2pOp>>> device;  // by communicator, in first-use order
};

thread_local GroupState t_group;

// A point-to-point failure inside a group, with the op, peer and tag named
// (a timeout's message already names them).
Status name_p2p_error(const xc_request_s &r) {
  const Request &req = r.req;
  Status st = explain_p2p(req, r.op, r.peer, req.tag, r.timeout_ms, r.comm_name);
  if (st.ok() || st.code() == XC_ERR_TIMEOUT) return st;
  std::string peer = r.peer == XC_ANY_SOURCE ? "any source" : "rank " + std::to_string(r.peer);
  return Status(st.code(), std::string(r.op) + (req.kind == RequestKind::kSend ? " to " : " from ") + peer + " (tag " +
                               std::to_string(req.tag) + ", comm '" + r.comm_name + "'): " + st.message());
}

}  // namespace

bool in_group() { return t_group.depth > 0; }

void group_add_p2p(xc_request_s *r, xc_status_t *status, bool owned) {
  GroupItem item;
  item.p2p = r;
  item.status = status;
  item.owned = owned;
  t_group.items.push_back(std::move(item));
}

void group_add_device_p2p(xc_comm_t comm, device::P2pOp op) {
  for (auto &entry : t_group.device)
    if (entry.first == comm) {
      entry.second.push_back(std::move(op));
      return;
    }
  t_group.device.emplace_back(comm, std::vector<device::P2pOp>{});
  t_group.device.back().second.push_back(std::move(op));
}

void group_add_coll(std::shared_ptr<CollTask> task) {
  GroupItem item;
  item.coll = std::move(task);
  t_group.items.push_back(std::move(item));
}

Status group_start() {
  ++t_group.depth;
  return Status::Ok();
}

Status group_end() {
  if (t_group.depth == 0) return Error(XC_ERR_INVALID_USAGE, "there is no open group on this thread (no xc_group_start)");
  if (--t_group.depth > 0) return Status::Ok();
  std::vector<GroupItem> items;
  items.swap(t_group.items);
  Status first;
  std::vector<std::pair<xc_comm_t, std::vector<device::P2pOp>>> device;
  device.swap(t_group.device);
  for (auto &entry : device) {  // stream-ordered: enqueued, not waited for
    Status st = device_p2p(entry.first, std::move(entry.second), "xc_group_end");
    if (!st.ok() && first.ok()) first = std::move(st);
  }
  // Every request is posted: waiting on them in any order drives them all.
  Deadline::Clock::time_point start = Deadline::Clock::now();
  for (GroupItem &item : items) {
    Status st;
    if (item.coll) {
      st = item.coll->wait();
    } else {
      xc_request_s *r = item.p2p;
      // The communicator's timeout, counted from xc_group_end.
      Deadline deadline = Deadline::AfterMs(r->timeout_ms, start);
      if (!r->req.done) (void)r->fabric->engine().wait(&r->req, deadline);
      st = name_p2p_error(*r);
      if (item.owned) {
        fill_status(r->req, r->rank_of_fabric.get(), item.status);
        request_free(r);
      }
    }
    if (!st.ok() && first.ok()) first = std::move(st);
  }
  return first;
}

}  // namespace xc::api
