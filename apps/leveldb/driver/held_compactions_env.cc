#include "driver/held_compactions_env.h"

namespace leveldb_driver {

namespace {

leveldb::Status Refused(const std::string& name) {
  return leveldb::Status::IOError(name, "the database is closing with its background work held");
}

}  // namespace

HeldCompactionsEnv::HeldCompactionsEnv(leveldb::Env* target) : leveldb::EnvWrapper(target) {}

HeldCompactionsEnv::~HeldCompactionsEnv() = default;

void HeldCompactionsEnv::Schedule(void (*function)(void* arg), void* arg) {
  std::lock_guard<std::mutex> lock(mutex_);
  held_.emplace_back(function, arg);
}

leveldb::Status HeldCompactionsEnv::NewWritableFile(const std::string& name,
                                                    leveldb::WritableFile** file) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closing_) {
      *file = nullptr;
      return Refused(name);
    }
  }
  return target()->NewWritableFile(name, file);
}

leveldb::Status HeldCompactionsEnv::NewAppendableFile(const std::string& name,
                                                      leveldb::WritableFile** file) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closing_) {
      *file = nullptr;
      return Refused(name);
    }
  }
  return target()->NewAppendableFile(name, file);
}

size_t HeldCompactionsEnv::held() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return held_.size();
}

void HeldCompactionsEnv::RunHeldWorkForClose() {
  std::unique_lock<std::mutex> lock(mutex_);
  closing_ = true;
  while (!held_.empty()) {
    const auto [function, arg] = held_.front();
    held_.erase(held_.begin());
    // Unlocked: the item may schedule another (DBImpl::BackgroundCall does,
    // holding the database's mutex).
    lock.unlock();
    function(arg);
    lock.lock();
  }
}

void DatabaseCloser::operator()(leveldb::DB* db) const {
  if (env != nullptr) env->RunHeldWorkForClose();
  delete db;
}

}  // namespace leveldb_driver
