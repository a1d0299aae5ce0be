#include "algo/forced.h"

#include "base/env.h"

namespace xc::algo {

namespace {

bool parse_kind(const std::string &name, CollKind *kind) {
  for (int k = 0; k < kCollKindCount; ++k)
    if (name == coll_kind_name(static_cast<CollKind>(k))) {
      *kind = static_cast<CollKind>(k);
      return true;
    }
  return false;
}

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

}  // namespace

Status forced_algo(const std::string &spec, CollKind kind, bool *forced, Algo *algo, bool *nccl) {
  *forced = false;
  if (nccl) *nccl = false;
  bool have_global = false, have_own = false;
  bool global_nccl = false, own_nccl = false, have_own_nccl = false;
  Algo global = Algo::kLocal, own = Algo::kLocal;
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    if (comma == std::string::npos) comma = spec.size();
    std::string item = trim(spec.substr(pos, comma - pos));
    pos = comma + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    std::string name = trim(eq == std::string::npos ? item : item.substr(eq + 1));
    if (name == kNcclAlgoName) {  // device memory through NCCL (docs/nccl.md); host ops keep their choice
      if (eq == std::string::npos) {
        global_nccl = true;
        continue;
      }
      CollKind k;
      if (!parse_kind(trim(item.substr(0, eq)), &k))
        return Error(XC_ERR_INVALID_ARGUMENT, "XC_ALGO='%s': unknown op '%s' (ops are named as in xc_<op>, e.g. allreduce)",
                     spec.c_str(), trim(item.substr(0, eq)).c_str());
      if (k == kind) have_own_nccl = own_nccl = true;
      continue;
    }
    const AlgoEntry *e = find_algo(name);
    if (!e)
      return Error(XC_ERR_INVALID_ARGUMENT, "XC_ALGO='%s': unknown algorithm '%s' (known: %s)", spec.c_str(),
                   name.c_str(), algo_names().c_str());
    if (eq == std::string::npos) {
      have_global = true;
      global = e->id;
      continue;
    }
    std::string op = trim(item.substr(0, eq));
    CollKind k;
    if (!parse_kind(op, &k))
      return Error(XC_ERR_INVALID_ARGUMENT, "XC_ALGO='%s': unknown op '%s' (ops are named as in xc_<op>, e.g. allreduce)",
                   spec.c_str(), op.c_str());
    if (k != kind) continue;
    if (!algo_applies(kind, e->id))
      return Error(XC_ERR_INVALID_ARGUMENT, "XC_ALGO='%s': %s has no algorithm '%s' (choices: %s)", spec.c_str(),
                   coll_kind_name(kind), name.c_str(), algo_choices(kind).c_str());
    have_own = true;
    own = e->id;
    have_own_nccl = true;  // an op's own item wins over a bare name
    own_nccl = false;
  }
  if (nccl) *nccl = have_own_nccl ? own_nccl : global_nccl;
  if (have_own) {
    *forced = true;
    *algo = own;
  } else if (have_global && algo_applies(kind, global)) {
    *forced = true;
    *algo = global;
  }
  return Status::Ok();
}

std::vector<ForcedChoice> forced_choices_from_env() {
  std::string spec = env_get("XC_ALGO");
  std::vector<ForcedChoice> t(static_cast<size_t>(kCollKindCount));
  for (int k = 0; k < kCollKindCount; ++k) {
    ForcedChoice &f = t[static_cast<size_t>(k)];
    f.status = forced_algo(spec, static_cast<CollKind>(k), &f.forced, &f.algo, &f.nccl);
  }
  return t;
}

}  // namespace xc::algo
