// The contents of xc_unique_id_t: the store's address and the job token,
// packed into its 128 bytes as "XCID1 host port token" text.
#pragma once

#include <string>

#include "base/status.h"
#include "xcomm.h"

namespace xc::bootstrap {

struct UniqueId {
  std::string host;
  uint16_t port = 0;
  std::string token;
};

Status encode_unique_id(const UniqueId &id, xc_unique_id_t *out);
Status decode_unique_id(const xc_unique_id_t &in, UniqueId *out);

}  // namespace xc::bootstrap
