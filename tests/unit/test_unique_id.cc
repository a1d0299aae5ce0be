// Unit tests of the unique id's encoding: round trips, what does not fit, and
// garbage that must be rejected rather than trusted.
#include <cstring>
#include <string>

#include "unit_test.h"

#include "bootstrap/store.h"
#include "bootstrap/unique_id.h"

using namespace xc;
using namespace xc::bootstrap;

namespace {



void round_trip(const std::string &host, uint16_t port, const std::string &token) {
  UniqueId in;
  in.host = host;
  in.port = port;
  in.token = token;
  xc_unique_id_t id;
  memset(&id, 0x5a, sizeof id);
  ASSERT_OK(encode_unique_id(in, &id));
  assert_non_null(memchr(id.internal, '\0', sizeof id.internal));
  // A copy (as a launcher would pass it on) decodes to the same thing.
  xc_unique_id_t copy;
  memcpy(&copy, &id, sizeof id);
  UniqueId out;
  ASSERT_OK(decode_unique_id(copy, &out));
  assert_string_equal(out.host.c_str(), host.c_str());
  assert_int_equal(out.port, port);
  assert_string_equal(out.token.c_str(), token.c_str());
}

void test_round_trip(void **) {
  round_trip("10.0.0.1", 29500, make_token());
  round_trip("::1", 1, make_token());
  round_trip("fe80::1%eth0", 65535, make_token());
  round_trip("node-017.cluster.example.org", 40000, make_token());
  xc_unique_id_t id;
  UniqueId in{"h", 80, "tok"};
  ASSERT_OK(encode_unique_id(in, &id));
  assert_string_equal(id.internal, "XCID1 h 80 tok");
}

void test_encode_rejects(void **) {
  xc_unique_id_t id;
  memset(&id, 0x11, sizeof id);
  xc_unique_id_t before = id;
  std::string token = make_token();
  // Longest host that fits: "XCID1 " + host + " 65535 " + 32 + NUL = 128.
  std::string fits(128 - 6 - 7 - token.size() - 1, 'h');
  ASSERT_OK(encode_unique_id(UniqueId{fits, 65535, token}, &id));
  before = id;
  expect_error(encode_unique_id(UniqueId{fits + "h", 65535, token}, &id), XC_ERR_INVALID_ARGUMENT, "do not fit");
  expect_error(encode_unique_id(UniqueId{"", 80, token}, &id), XC_ERR_INVALID_ARGUMENT, "host");
  expect_error(encode_unique_id(UniqueId{"a b", 80, token}, &id), XC_ERR_INVALID_ARGUMENT, "host");
  expect_error(encode_unique_id(UniqueId{"h", 0, token}, &id), XC_ERR_INVALID_ARGUMENT, "port");
  expect_error(encode_unique_id(UniqueId{"h", 80, ""}, &id), XC_ERR_INVALID_ARGUMENT, "token");
  expect_error(encode_unique_id(UniqueId{"h", 80, "a\nb"}, &id), XC_ERR_INVALID_ARGUMENT, "token");
  expect_error(encode_unique_id(UniqueId{"h", 80, token}, nullptr), XC_ERR_INVALID_ARGUMENT, "NULL");
  assert_memory_equal(&id, &before, sizeof id);  // left untouched on failure
}

void expect_garbage(const xc_unique_id_t &id) {
  UniqueId out;
  out.host = "untouched";
  expect_error(decode_unique_id(id, &out), XC_ERR_INVALID_ARGUMENT, "not a unique id made by xc_get_unique_id");
  assert_string_equal(out.host.c_str(), "untouched");
}

void expect_garbage(const char *text) {
  xc_unique_id_t id;
  memset(&id, 0, sizeof id);
  strncpy(id.internal, text, sizeof id.internal - 1);
  expect_garbage(id);
}

void test_garbage_rejected(void **) {
  xc_unique_id_t id;
  memset(&id, 0, sizeof id);
  expect_garbage(id);  // all zeros (an id never filled in)
  memset(&id, 0xff, sizeof id);
  expect_garbage(id);  // no NUL anywhere
  memset(&id, 'A', sizeof id);
  expect_garbage(id);
  for (int i = 0; i < 128; ++i) id.internal[i] = static_cast<char>(i * 37 + 11);
  expect_garbage(id);
  const char *bad[] = {
      "XCID1",
      "XCID1 h 80",
      "XCID2 h 80 tok",
      "xcid1 h 80 tok",
      "XCID1 h 0 tok",
      "XCID1 h 65536 tok",
      "XCID1 h 080 tok",
      "XCID1 h 8x tok",
      "XCID1 h -80 tok",
      "XCID1 h 80 ",
      "XCID1  h 80 tok",
      "XCID1 h 80 tok extra",
      "XCID1 h 80 tok ",
      " XCID1 h 80 tok",
      "XCID1 h\t80 tok",
      "XCID1 h 80 t\x01k",
  };
  for (const char *b : bad) expect_garbage(b);
  // A valid id whose text is cut short by a stray NUL.
  UniqueId in{"host", 1234, make_token()};
  ASSERT_OK(encode_unique_id(in, &id));
  id.internal[8] = '\0';
  expect_garbage(id);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_encode_rejects),
      cmocka_unit_test(test_garbage_rejected),
  };
  return cmocka_run_group_tests_name("bootstrap unique id", tests, nullptr, nullptr);
}
