// fake_engine.h: a deterministic Engine for the runtime's unit tests.
//
// Nothing happens behind the test's back: a prepared request becomes
// kSubmitted on Submit() and stays so until the test (or the runtime) asks
// for it to complete, through Wait() on it, CompleteNext() or
// CompleteAll().  Completing a request runs its call for real with
// ExecuteNow() (real system calls on real files), unless the test scripted
// a result for it with SetResultForCall().  Links follow the engines' rule:
// a request linked after one that failed or moved fewer bytes than asked
// completes with -ECANCELED.
//
// An open it runs leaves its descriptor at a number in foreactor's high
// range (engine/high_descriptors.h), standing in for a real engine's table
// of its own: InstallEarlyDescriptor() moves it to the lowest free number,
// ReleaseEarlyDescriptor() closes it.  (Both close a descriptor in the
// program's table, which a real engine never does: record locks are the
// real engines' tests' business.)
//
// Every prepared request is recorded in order (a copy of its call and its
// address), so are the sizes of the Submit() batches and the cancellations.
// Protocol errors of the code under test (preparing a request that is not
// kIdle or of an unsupported type, waiting on a request never submitted or
// unknown to the engine) are reported as test failures.
#ifndef FOREACTOR_TESTS_UNIT_RUNTIME_FAKE_ENGINE_H_
#define FOREACTOR_TESTS_UNIT_RUNTIME_FAKE_ENGINE_H_

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "base/call_types.h"
#include "engine/engine.h"
#include "engine/high_descriptors.h"
#include "engine/request_rules.h"

namespace foreactor::testing {

class FakeEngine final : public Engine {
 public:
  // One request the engine was given, in Prepare() order (a linked request
  // right after the one it is linked to).
  struct PreparedCall {
    foreactor_call call;  // copy at Prepare() time; call.path is set to null,
    std::string path;     // the path is kept here ("" when there was none)
    RequestOperation operation = RequestOperation::kCall;
    Request* request;  // the request itself
    bool submitted = false;
    bool completed = false;
    bool cancelled = false;  // completed by Cancel()
    bool ordered = false;    // Request::ordered at Prepare() time
    bool streamed = false;   // Request::streamed at Prepare() time
    int64_t result = 0;      // valid once completed
  };

  // Supports every call type and has no queue limit.
  FakeEngine() {
    for (bool& supported : supported_) supported = true;
  }

  // ----------------------------------------------------------- configuration

  void SetSupports(foreactor_call_type type, bool supported) { supported_[type] = supported; }

  // Whether Prepare() accepts write-back hints (RequestOperation::
  // kStartWriteBack); it does unless told otherwise.
  void SetStartsWriteBack(bool starts) { starts_write_back_ = starts; }

  // Supports exactly the types listed.
  void SupportOnly(std::initializer_list<foreactor_call_type> types) {
    for (bool& supported : supported_) supported = false;
    for (foreactor_call_type type : types) supported_[type] = true;
  }

  // Prepare() refuses a chain that would bring the requests prepared or
  // submitted and not completed above `limit`.
  void SetCapacity(size_t limit) { capacity_ = limit; }

  // The `call_index`-th prepared request (0-based, counting every request
  // of a chain) completes with `result` instead of running.  Its buffers are
  // left untouched.
  void SetResultForCall(size_t call_index, int64_t result) { scripted_[call_index] = result; }

  // The next Submit() fails with `negative_errno`: it completes every
  // prepared request with that value and returns it.
  void FailNextSubmit(int negative_errno) { submit_error_ = negative_errno; }

  // ------------------------------------------------------------------ Engine

  const char* name() const override { return "fake"; }

  bool Supports(foreactor_call_type type) const override {
    return IsValidType(type) && supported_[type];
  }

  bool Prepare(Request* request) override {
    size_t length = 0;
    for (Request* link = request; link != nullptr; link = link->linked_next) {
      if (link->state.load() != RequestState::kIdle) {
        ADD_FAILURE() << "FakeEngine: Prepare() of a request that is not idle";
        return false;
      }
      if (link->operation == RequestOperation::kStartWriteBack) {
        if (!starts_write_back_) return false;
      } else if (!Supports(link->call.type)) {
        ADD_FAILURE() << "FakeEngine: Prepare() of an unsupported call type " << link->call.type;
        return false;
      }
      ++length;
    }
    if (request->ordered && request->linked_next != nullptr) {
      ADD_FAILURE() << "FakeEngine: Prepare() of an ordered request with a link";
      return false;
    }
    if (in_flight() + length > capacity_) return false;
    const size_t head = records_.size();
    for (Request* link = request; link != nullptr; link = link->linked_next) {
      PreparedCall record;
      record.call = link->call;
      record.path = link->call.path != nullptr ? link->call.path : "";
      record.call.path = nullptr;
      record.operation = link->operation;
      record.ordered = link->ordered;
      record.streamed = link->streamed;
      record.request = link;
      records_.push_back(record);
      chain_heads_.push_back(head);
      link->state.store(RequestState::kPrepared);
    }
    return true;
  }

  int Submit() override {
    size_t batch = 0;
    for (PreparedCall& record : records_) {
      if (!record.submitted && !record.completed) ++batch;
    }
    submit_batches_.push_back(batch);
    if (submit_error_ != 0) {
      const int error = submit_error_;
      submit_error_ = 0;
      for (PreparedCall& record : records_) {
        if (record.submitted || record.completed) continue;
        record.submitted = true;
        Finish(record, error);
      }
      return error;
    }
    for (PreparedCall& record : records_) {
      if (record.submitted || record.completed) continue;
      record.submitted = true;
      record.request->state.store(RequestState::kSubmitted);
    }
    return static_cast<int>(batch);
  }

  // Completes `request` (and, first, what it is linked after).
  void Wait(Request* request) override {
    ++waits_;
    const size_t index = FindOutstanding(request);
    if (index == kNone) {
      if (request->state.load() != RequestState::kCompleted) {
        ADD_FAILURE() << "FakeEngine: Wait() on a request the engine does not hold";
      }
      return;
    }
    if (!records_[index].submitted) {
      ADD_FAILURE() << "FakeEngine: Wait() on a request that was prepared but never submitted";
    }
    CompleteRecord(index);
  }

  void Poll() override { ++polls_; }

  int64_t InstallEarlyDescriptor(int64_t early, const foreactor_call& open) override {
    ++installs_;
    const int command = (open.flags & O_CLOEXEC) != 0 ? F_DUPFD_CLOEXEC : F_DUPFD;
    const int lowest = fcntl(static_cast<int>(early), command, 0);
    ::close(static_cast<int>(early));
    return lowest >= 0 ? lowest : -errno;
  }

  void ReleaseEarlyDescriptor(int64_t early) override {
    ++releases_;
    ::close(static_cast<int>(early));
  }

  // Completes a request not completed yet with -ECANCELED.
  // Ordered requests (Request::ordered) run as the thread pool's lane
  // does: in Prepare() order, none after one that fell short, failed or
  // was cancelled, until RestartOrder().
  void RestartOrder() override { ordered_failed_ = false; }

  void Cancel(Request* request) override {
    const size_t index = FindOutstanding(request);
    if (index == kNone) {
      // Cancelling a request that completed is allowed; one this engine
      // never held is another's (a coalesced read's member, say).
      if (!EverHeld(request)) ADD_FAILURE() << "FakeEngine: Cancel() on a request it never held";
      return;
    }
    ++cancel_count_;
    records_[index].cancelled = true;
    Finish(records_[index], -ECANCELED);
  }

  // -------------------------------------------------------- driving the fake

  // Completes the oldest submitted request not completed yet.  Returns
  // false when there is none.
  bool CompleteNext() {
    for (size_t i = 0; i < records_.size(); ++i) {
      if (records_[i].submitted && !records_[i].completed) {
        CompleteRecord(i);
        return true;
      }
    }
    return false;
  }

  // Completes every submitted request, oldest first.  Returns how many.
  size_t CompleteAll() {
    size_t count = 0;
    while (CompleteNext()) ++count;
    return count;
  }

  // ----------------------------------------------------------- observations

  const std::vector<PreparedCall>& prepared() const { return records_; }
  const std::vector<size_t>& submit_batches() const { return submit_batches_; }
  size_t cancel_count() const { return cancel_count_; }
  size_t wait_count() const { return waits_; }
  size_t poll_count() const { return polls_; }
  // Early descriptors installed and released.
  size_t install_count() const { return installs_; }
  size_t release_count() const { return releases_; }

  // Requests prepared or submitted and not completed.
  size_t in_flight() const {
    size_t count = 0;
    for (const PreparedCall& record : records_) count += record.completed ? 0 : 1;
    return count;
  }

 private:
  static constexpr size_t kNone = std::numeric_limits<size_t>::max();

  static bool IsValidType(foreactor_call_type type) {
    return type >= 0 && type < FOREACTOR_CALL_TYPE_COUNT;
  }

  // True when `request` was ever prepared on this engine.
  bool EverHeld(const Request* request) const {
    for (const auto& record : records_) {
      if (record.request == request) return true;
    }
    return false;
  }

  // The newest record of `request` that is not completed, or kNone.
  size_t FindOutstanding(const Request* request) const {
    for (size_t i = records_.size(); i-- > 0;) {
      if (records_[i].request == request) return records_[i].completed ? kNone : i;
    }
    return kNone;
  }

  void CompleteRecord(size_t index) {
    PreparedCall& record = records_[index];
    if (record.completed) return;
    if (record.ordered) {
      // The lane's order: every earlier ordered request first; none runs
      // after one that fell short, failed or was cancelled.
      for (size_t earlier = 0; earlier < index; ++earlier) {
        if (records_[earlier].ordered) CompleteRecord(earlier);
      }
      if (ordered_failed_) {
        Finish(records_[index], -ECANCELED);
        return;
      }
    }
    const size_t head = chain_heads_[index];
    bool run = true;
    if (index > head) {
      CompleteRecord(index - 1);
      run = link_continues_[index - 1];
    }
    if (!run) {
      Finish(records_[index], -ECANCELED);
      return;
    }
    auto scripted = scripted_.find(index);
    if (scripted != scripted_.end()) {
      Finish(records_[index], scripted->second);
      return;
    }
    // Run this one call alone: a scratch request without the link, whose
    // buffers are the real request's.
    Request scratch;
    scratch.operation = records_[index].request->operation;
    scratch.call = records_[index].request->call;
    scratch.linked_next = nullptr;
    ExecuteNow(&scratch);
    if (scratch.operation == RequestOperation::kCall && IsOpen(scratch.call.type) &&
        scratch.result >= 0) {
      // Out of the program's way, as an engine's own table would be.
      const long floor = HighDescriptorFloor(HighDescriptorCeiling());
      const int high = fcntl(static_cast<int>(scratch.result), F_DUPFD_CLOEXEC, floor);
      ::close(static_cast<int>(scratch.result));
      scratch.result = high >= 0 ? high : -ECANCELED;
    }
    records_[index].request->statx_buffer = scratch.statx_buffer;
    Finish(records_[index], scratch.result);
  }

  void Finish(PreparedCall& record, int64_t result) {
    const size_t index = static_cast<size_t>(&record - records_.data());
    if (link_continues_.size() < records_.size()) link_continues_.resize(records_.size(), false);
    record.completed = true;
    record.result = result;
    record.request->result = result;
    link_continues_[index] = LinkContinues(*record.request);
    if (record.ordered && !link_continues_[index]) ordered_failed_ = true;
    CompleteRequest(record.request, result);
  }

  bool supported_[FOREACTOR_CALL_TYPE_COUNT];
  bool starts_write_back_ = true;
  size_t capacity_ = std::numeric_limits<size_t>::max();
  std::map<size_t, int64_t> scripted_;
  int submit_error_ = 0;
  std::vector<PreparedCall> records_;
  std::vector<size_t> chain_heads_;   // per record: index of its chain's first record
  std::vector<bool> link_continues_;  // per completed record: may its successor run
  std::vector<size_t> submit_batches_;
  size_t installs_ = 0;
  size_t releases_ = 0;
  bool ordered_failed_ = false;  // the ordered lane stopped (Request::ordered)
  size_t cancel_count_ = 0;
  size_t waits_ = 0;
  size_t polls_ = 0;
};

}  // namespace foreactor::testing

#endif  // FOREACTOR_TESTS_UNIT_RUNTIME_FAKE_ENGINE_H_
