#pragma once

#include "core/memory.h"

class QThreadPool;

namespace shardscope {

/// A ForEachRank (core/memory.h) on the calling thread and the free threads of `pool` (the
/// application's global pool when null): body(k) once for each k in [0, n), the caller taking
/// its share, so that it finishes even when the pool has no thread free. The pool's threads
/// live on between calls, and with them the engine's per-thread memos. The first exception
/// stops what is left and is rethrown on the caller.
void forEachOnPool(size_t n, FunctionRef<void(size_t k)> body, QThreadPool *pool = nullptr);

} // namespace shardscope
