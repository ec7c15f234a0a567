#pragma once

// A model of PyTorch's caching allocator (c10/cuda/CUDACachingAllocator.cpp) and torch_npu's
// NPU caching allocator (torch_npu/csrc/core/npu/NPUCachingAllocator.cpp, the same design), and
// its replay over a step's timeline (core/timeline.h): what the allocator reserves beyond what is
// allocated, and whether a step runs out of memory on a device of a given size.
//
// Each rule says in allocator.cpp which behaviour of the original it follows and from which
// version. Not modelled: CUDA graphs' private pools, record_stream's deferred frees (the
// timeline is one ordered sequence), roundup_power2_divisions (off by default), torch_npu's
// page_size:1g and segment_size_mb options.
#include "blockpool.h"

#include <cstdint>
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace shardscope {

struct StepTimeline;

/// Which allocator's rules apply.
enum class AllocatorRules {
    Cuda, ///< PyTorch's CUDACachingAllocator
    Npu,  ///< torch_npu's NPUCachingAllocator: every request padded by 32 bytes first
};

/// The allocator settings of PYTORCH_CUDA_ALLOC_CONF / PYTORCH_NPU_ALLOC_CONF (plan
/// `memory.allocator`).
struct AllocatorConfig
{
    bool expandable_segments = false;
    double max_split_size_mb = 0;           ///< 0: unlimited (the default)
    double garbage_collection_threshold = 0; ///< 0: off
    bool operator==(const AllocatorConfig &) const = default;
};

/// The caching allocator's state: segments reserved from the device, split into blocks.
class CachingAllocator
{
public:
    /// `capacity`: bytes the allocator may reserve before the device reports out of memory
    /// (+infinity: a device with room). `allowed`: the memory garbage_collection_threshold is a
    /// fraction of (the device's usable bytes; 0: as `capacity`).
    CachingAllocator(AllocatorRules rules, const AllocatorConfig &config, double capacity,
                     double allowed = 0);
    void setCapacity(double capacity);
    /// Bytes a malloc of `bytes` on `stream` would reserve from the device now (0: served from
    /// the cache).
    double missBytes(double bytes, int stream = 0) const;
    /// An upper bound of missBytes on any stream, without looking at the cache: what a miss
    /// reserves at most.
    double missBytesBound(double bytes) const;

    /// A block for `bytes` on `stream`; -1 when the device is out of memory even after the
    /// allocator released what it caches.
    int malloc(double bytes, int stream = 0);
    void free(int block);

    double allocatedBytes() const { return double(allocated_); } ///< rounded block sizes
    double reservedBytes() const { return double(reserved_); }
    double peakReservedBytes() const { return double(peakReserved_); }
    void resetPeak() { peakReserved_ = reserved_; }
    int retries() const { return retries_; } ///< mallocs that needed the cache released
    /// Times the reserved bytes changed (a segment or pages reserved or released).
    uint64_t reservationChanges() const { return changes_; }
    /// Whether garbage_collection_threshold is in force (frees then age blocks).
    bool collectsGarbage() const
    {
        return config_.garbage_collection_threshold > 0 && allowed_ != std::numeric_limits<uint64_t>::max();
    }
    int segments() const;                    ///< live segments (device allocations)
    size_t cachedBlocks() const { return small_.size() + large_.size(); } ///< free blocks held

    /// The size a request is rounded to, and the segment a miss reserves (the originals'
    /// round_size and get_allocation_size).
    uint64_t roundSize(uint64_t bytes) const;
    static uint64_t allocationSize(uint64_t rounded);

private:
    struct Block
    {
        uint64_t addr = 0, size = 0;
        int segment = -1, prev = -1, next = -1;
        int stream = 0;
        bool small = false, allocated = false;
        uint64_t freedAt = 0; ///< the pool's lookup count when it was freed (garbage collection)
    };
    struct Segment
    {
        uint64_t size = 0; ///< reserved (mapped) bytes
        int stream = 0;
        bool small = false, live = true, expandable = false;
        int last = -1; ///< expandable: the block at the end of the mapped range
    };
    using Key = FreeBlock; ///< a free block in the pools (core/blockpool.h), by best fit

    BlockPool &pool(bool small) { return small ? small_ : large_; }
    Key keyOf(int b) const
    {
        const Block &k = blocks_[size_t(b)];
        return {k.stream, k.size, k.addr, b};
    }
    int lookupFree(bool small, int stream, uint64_t size) const;
    /// Whether get_free_block takes the free block `k` for (stream, size).
    bool takes(const Key &k, int stream, uint64_t size) const;
    int newBlock() ///< a free slot of blocks_ (reused, or appended)
    {
        if (!freeIds_.empty()) {
            const int b = freeIds_.back();
            freeIds_.pop_back();
            return b;
        }
        blocks_.emplace_back();
        return int(blocks_.size()) - 1;
    }
    int newSegment(bool small, int stream, uint64_t size);
    int expand(bool small, int stream, uint64_t size);
    bool reserve(uint64_t bytes);
    void releaseSegment(int segment);
    bool releaseAvailable(bool small, int stream, uint64_t size);
    void releaseAll();
    void collectGarbage();
    int take(int block, uint64_t size);
    uint64_t maxSplit() const { return maxSplit_; } ///< max_split_size in bytes (max: unlimited)

    AllocatorRules rules_;
    AllocatorConfig config_;
    uint64_t capacity_, allowed_;
    uint64_t maxSplit_;
    std::vector<Block> blocks_;
    std::vector<int> freeIds_;
    std::vector<Segment> segments_;
    BlockPool small_, large_;
    uint64_t allocated_ = 0, reserved_ = 0, peakReserved_ = 0;
    uint64_t lookups_ = 0;
    uint64_t changes_ = 0;
    int retries_ = 0;
};

/// The allocator replayed over a rank's timeline.
struct ReplayResult
{
    double peak_reserved = 0;  ///< over the steady step (torch.cuda.max_memory_reserved())
    double peak_allocated = 0; ///< rounded blocks, over the steady step
    double first_step_reserved = 0; ///< peak reserved up to the end of the first step
    bool oom = false;          ///< ran out of memory
    int oom_event = -1;        ///< the event (timeline index) that could not be served
    int retries = 0;           ///< allocations served only after releasing the cache
    /// Events of alike runs passed over: they would have left the allocator as it was
    /// (StepTimeline::repeats; the figures are those of replaying every event).
    int passed_events = 0;
    std::vector<float> reserved; ///< reserved bytes after each event (when asked for)
};

/// Replays `t` on a device where the allocator may reserve `capacity` bytes (use +infinity for
/// "a device with room").
ReplayResult replayTimeline(const StepTimeline &t, AllocatorRules rules, const AllocatorConfig &config,
                            double capacity, bool keepCurve = false);

/// Both replays at once: on a device with room, and on the device itself (`capacity`). They run
/// alike until the first allocation that would reserve beyond the capacity; only from there is
/// the allocator's state forked and the device's replay continued on its own.
struct DualReplay
{
    ReplayResult room;   ///< reserved as max_memory_reserved() reports it
    ReplayResult device; ///< whether the step runs out of memory, and where
};
/// `stopAtOom`: stop both when the device runs out (the room's figures are then partial).
DualReplay replayOnDevice(const StepTimeline &t, AllocatorRules rules, const AllocatorConfig &config,
                          double capacity, bool keepCurve = false, bool stopAtOom = false);

} // namespace shardscope
