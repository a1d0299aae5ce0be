// xc_unique_id_t holds "XCID1 <host> <port> <token>" as NUL-terminated text:
// readable in a debugger, and any byte pattern that is not exactly that is
// rejected rather than half-trusted.
#include "bootstrap/unique_id.h"

#include <cstring>
#include <string>
#include <vector>

namespace xc::bootstrap {

namespace {

constexpr char kMagic[] = "XCID1";

// A field is printable ASCII without spaces.
bool valid_field(const std::string &s) {
  if (s.empty()) return false;
  for (char ch : s)
    if (ch <= ' ' || ch > '~') return false;
  return true;
}

Status not_an_id() { return Error(XC_ERR_INVALID_ARGUMENT, "not a unique id made by xc_get_unique_id"); }

}  // namespace

Status encode_unique_id(const UniqueId &id, xc_unique_id_t *out) {
  if (!out) return Error(XC_ERR_INVALID_ARGUMENT, "unique id: out is NULL");
  if (!valid_field(id.host))
    return Error(XC_ERR_INVALID_ARGUMENT, "unique id: host '%s' is empty or has spaces or unprintable characters",
                 id.host.c_str());
  if (id.port == 0) return Error(XC_ERR_INVALID_ARGUMENT, "unique id: port 0 is not a port");
  if (!valid_field(id.token))
    return Error(XC_ERR_INVALID_ARGUMENT, "unique id: the token is empty or has spaces or unprintable characters");
  std::string text = std::string(kMagic) + " " + id.host + " " + std::to_string(id.port) + " " + id.token;
  if (text.size() + 1 > sizeof out->internal)
    return Error(XC_ERR_INVALID_ARGUMENT,
                 "unique id: host '%s' and a token of %zu characters do not fit in the %zu bytes of xc_unique_id_t",
                 id.host.c_str(), id.token.size(), sizeof out->internal);
  xc_unique_id_t tmp;
  memset(&tmp, 0, sizeof tmp);
  memcpy(tmp.internal, text.data(), text.size());
  *out = tmp;
  return Status::Ok();
}

Status decode_unique_id(const xc_unique_id_t &in, UniqueId *out) {
  if (!out) return Error(XC_ERR_INVALID_ARGUMENT, "unique id: out is NULL");
  const char *p = in.internal;
  const void *nul = memchr(p, '\0', sizeof in.internal);
  if (!nul) return not_an_id();
  std::string text(p, static_cast<const char *>(nul) - p);

  std::vector<std::string> fields;
  size_t start = 0;
  for (;;) {
    size_t sp = text.find(' ', start);
    fields.push_back(text.substr(start, sp == std::string::npos ? std::string::npos : sp - start));
    if (sp == std::string::npos) break;
    start = sp + 1;
  }
  if (fields.size() != 4 || fields[0] != kMagic) return not_an_id();
  for (const std::string &f : fields)
    if (!valid_field(f)) return not_an_id();

  const std::string &port_text = fields[2];
  if (port_text.size() > 5 || (port_text.size() > 1 && port_text[0] == '0')) return not_an_id();
  unsigned long port = 0;
  for (char ch : port_text) {
    if (ch < '0' || ch > '9') return not_an_id();
    port = port * 10 + static_cast<unsigned long>(ch - '0');
  }
  if (port == 0 || port > 65535) return not_an_id();

  UniqueId id;
  id.host = fields[1];
  id.port = static_cast<uint16_t>(port);
  id.token = fields[3];
  *out = std::move(id);
  return Status::Ok();
}

}  // namespace xc::bootstrap
