#pragma once
// The in-memory plan cache: graph key -> Plan, least recently used first out. Plans are
// shared: one evicted while a step runs it stays alive until that step lets go of it.
#include <cstdlib>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lazytensor/compile/plan.hpp"
#include "lazytensor/core/env.hpp"

namespace lt {

class PlanCache {
 public:
  explicit PlanCache(std::size_t capacity) : capacity_(capacity) {}

  /// The plan cached under `key`, now the most recently used; null when there is none.
  std::shared_ptr<const Plan> find(hash_t key) {
    std::lock_guard lock(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->second;
  }

  /// Caches `plan` under its key, replacing a plan of the same key, evicting the least
  /// recently used beyond capacity.
  void insert(std::shared_ptr<const Plan> plan) {
    if (capacity_ == 0) return;
    hash_t key = plan->key;
    std::lock_guard lock(mu_);
    if (auto it = index_.find(key); it != index_.end()) {
      it->second->second = std::move(plan);
      lru_.splice(lru_.begin(), lru_, it->second);
      return;
    }
    lru_.emplace_front(key, std::move(plan));
    index_.emplace(key, lru_.begin());
    while (lru_.size() > capacity_) {
      index_.erase(lru_.back().first);
      lru_.pop_back();
    }
  }

  /// The cached plans, most recently used first.
  std::vector<std::shared_ptr<const Plan>> plans() const {
    std::lock_guard lock(mu_);
    std::vector<std::shared_ptr<const Plan>> out;
    out.reserve(lru_.size());
    for (const auto& entry : lru_) out.push_back(entry.second);
    return out;
  }

  std::size_t size() const {
    std::lock_guard lock(mu_);
    return lru_.size();
  }
  std::size_t capacity() const { return capacity_; }

  void clear() {
    std::lock_guard lock(mu_);
    index_.clear();
    lru_.clear();
  }

 private:
  using Entry = std::pair<hash_t, std::shared_ptr<const Plan>>;
  mutable std::mutex mu_;
  std::size_t capacity_;
  std::list<Entry> lru_;  // most recently used first
  std::unordered_map<hash_t, std::list<Entry>::iterator> index_;
};

namespace detail {
/// LT_COMPILATION_CACHE_SIZE: how many plans the cache keeps (default 1024; 0: none).
inline std::size_t cache_capacity_from_env() {
  return static_cast<std::size_t>(env_count("LT_COMPILATION_CACHE_SIZE", 1024));
}
}  // namespace detail

/// The process's plan cache, shared by every lazy device (plans hold no device state).
inline PlanCache& plan_cache() {
  static PlanCache cache(detail::cache_capacity_from_env());
  return cache;
}

}  // namespace lt
