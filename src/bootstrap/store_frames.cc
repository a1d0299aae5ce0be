// The bootstrap store's request parser (see store_frames.h).
#include "bootstrap/store_frames.h"

#include <algorithm>

namespace xc::bootstrap::wire {

Head scan_head(const char *p, size_t n, bool authed, size_t max_value, uint8_t *type, uint32_t *len) {
  if (n < kHeaderBytes) return Head::kNeedMore;
  const uint32_t l = get_u32(p);
  const uint8_t t = static_cast<uint8_t>(p[4]);
  *type = t;
  *len = l;
  if (!authed) {
    if (t != kHello) return Head::kNotHello;
    return l > max_payload(kHello) ? Head::kMalformed : Head::kFrame;
  }
  // max_payload(kCancel) is 0: a CANCEL with a payload is malformed too.
  if (t < kHello || t > kCancel || l > max_payload(t)) return Head::kMalformed;
  if (l > request_limit(t, std::min(max_value, kMaxValueBytes))) return Head::kTooLarge;
  return Head::kFrame;
}

bool decode_request(uint8_t type, const char *p, size_t n, Request *out) {
  Reader r(p, n);
  Request q;
  q.type = type;
  switch (type) {
    case kHello:
      if (!r.u32(&q.version) || !r.view(kMaxTokenBytes, &q.token)) return false;
      break;
    case kSet:
      if (!r.view(kMaxKeyBytes, &q.key) || !r.view(kMaxValueBytes, &q.value)) return false;
      break;
    case kGet:
      if (!r.view(kMaxKeyBytes, &q.key)) return false;
      break;
    case kAdd:
      if (!r.view(kMaxKeyBytes, &q.key) || !r.i64(&q.delta)) return false;
      break;
    case kCheck: {
      uint32_t count = 0;
      // Every key takes at least its 4-byte length: a count the payload
      // cannot hold is refused before anything is reserved for it.
      if (!r.u32(&count) || count > kMaxCheckKeys || count > r.left() / 4) return false;
      q.keys.resize(count);
      for (uint32_t i = 0; i < count; ++i)
        if (!r.view(kMaxKeyBytes, &q.keys[i])) return false;
      break;
    }
    case kCancel:
      break;
    default:
      return false;
  }
  if (!r.done()) return false;
  *out = std::move(q);
  return true;
}

std::string encode_request(const Request &r) {
  auto put_view = [](std::string *f, std::string_view s) {
    put_u32(f, static_cast<uint32_t>(s.size()));
    f->append(s.data(), s.size());
  };
  std::string f = begin_frame(r.type);
  switch (r.type) {
    case kHello:
      put_u32(&f, r.version);
      put_view(&f, r.token);
      break;
    case kSet:
      f.reserve(kHeaderBytes + 8 + r.key.size() + r.value.size());
      put_view(&f, r.key);
      put_view(&f, r.value);
      break;
    case kGet:
      put_view(&f, r.key);
      break;
    case kAdd:
      put_view(&f, r.key);
      put_i64(&f, r.delta);
      break;
    case kCheck: {
      size_t bytes = 4;
      for (std::string_view k : r.keys) bytes += 4 + k.size();
      f.reserve(kHeaderBytes + bytes);
      put_u32(&f, static_cast<uint32_t>(r.keys.size()));
      for (std::string_view k : r.keys) put_view(&f, k);
      break;
    }
    default:
      break;
  }
  finish_frame(&f);
  return f;
}

void RequestStream::release() {
  std::vector<char>().swap(buf_);
  budget_->used -= charged_;
  charged_ = 0;
}

bool RequestStream::reserve(size_t want, size_t total) {
  size_t cap = buf_.capacity();
  if (want <= cap) return true;
  size_t grown = std::max({want, 2 * cap, size_t{256}});
  grown = std::min(grown, std::max(total, want));
  if (total > kSmallFrame && budget_->used - charged_ + grown > budget_->limit) return false;
  buf_.reserve(grown);
  budget_->used += buf_.capacity() - charged_;
  charged_ = buf_.capacity();
  budget_->peak = std::max(budget_->peak, budget_->used);
  return true;
}

RequestStream::Item RequestStream::next(const char **p, size_t *n, bool authed) {
  Item it;
  if (delivered_) {
    delivered_ = false;
    release();
  }
  auto consume = [p, n](size_t k) {
    *p += k;
    *n -= k;
  };
  if (skip_) {
    size_t k = std::min(skip_, *n);
    skip_ -= k;
    consume(k);
    if (skip_) return it;
  }
  if (buf_.empty()) {
    if (*n == 0) return it;
    uint8_t t = 0;
    uint32_t l = 0;
    switch (scan_head(*p, *n, authed, max_value_, &t, &l)) {
      case Head::kNeedMore:
        reserve(*n, kHeaderBytes);  // a few header bytes: never refused
        append(*p, *n);
        consume(*n);
        return it;
      case Head::kNotHello:
        it.event = Event::kNotHello;
        it.type = t;
        return it;
      case Head::kMalformed:
        it.event = Event::kMalformed;
        it.type = t;
        it.len = l;
        return it;
      case Head::kTooLarge:
        skip_ = kHeaderBytes + size_t{l};  // the next call discards it
        it.event = Event::kTooLarge;
        it.type = t;
        it.len = l;
        return it;
      case Head::kFrame:
        break;
    }
    const size_t total = kHeaderBytes + size_t{l};
    if (*n >= total) {  // whole in the window: no copy
      it.event = Event::kFrame;
      it.type = t;
      it.len = l;
      it.payload = *p + kHeaderBytes;
      consume(total);
      return it;
    }
    if (!reserve(*n, total)) {
      skip_ = total;
      it.event = Event::kOverBudget;
      it.type = t;
      it.len = l;
      return it;
    }
    type_ = t;
    len_ = l;
    append(*p, *n);
    consume(*n);
    return it;
  }

  // A partial frame is buffered: first complete its header.
  if (buf_.size() < kHeaderBytes) {
    size_t k = std::min(kHeaderBytes - buf_.size(), *n);
    reserve(buf_.size() + k, kHeaderBytes);
    append(*p, k);
    consume(k);
    if (buf_.size() < kHeaderBytes) return it;
    uint8_t t = 0;
    uint32_t l = 0;
    switch (scan_head(buf_.data(), buf_.size(), authed, max_value_, &t, &l)) {
      case Head::kNeedMore:  // cannot happen: the header is whole
      case Head::kMalformed:
        it.event = Event::kMalformed;
        it.type = t;
        it.len = l;
        return it;
      case Head::kNotHello:
        it.event = Event::kNotHello;
        it.type = t;
        return it;
      case Head::kTooLarge:
        release();
        skip_ = l;
        it.event = Event::kTooLarge;
        it.type = t;
        it.len = l;
        return it;
      case Head::kFrame:
        type_ = t;
        len_ = l;
        break;
    }
  }
  const size_t total = kHeaderBytes + size_t{len_};
  const size_t k = std::min(total - buf_.size(), *n);
  if (!reserve(buf_.size() + k, total)) {
    skip_ = total - buf_.size();
    release();
    it.event = Event::kOverBudget;
    it.type = type_;
    it.len = len_;
    return it;
  }
  append(*p, k);
  consume(k);
  if (buf_.size() < total) return it;
  it.event = Event::kFrame;
  it.type = type_;
  it.len = len_;
  it.payload = buf_.data() + kHeaderBytes;
  delivered_ = true;
  return it;
}

}  // namespace xc::bootstrap::wire
