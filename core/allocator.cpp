// The caching allocator model (see allocator.h). Rules, as read in PyTorch's
// c10/cuda/CUDACachingAllocator.cpp (2.6 to 2.11; main of 2025) and torch_npu's
// NPUCachingAllocator.cpp (v2.1 to v2.6 branches), no code copied:
//  - round_size: requests below 512 B take 512 B, others round up to a multiple of 512 B
//    (roundup_power2_divisions off, the default). torch_npu adds 32 B to every request first
//    (AddPadSize; 0 only on SoCs newer than the 910B), so a 1 MiB request lands in the large pool.
//  - Pools: requests of at most 1 MiB (kSmallSize) come from the small pool, others from the
//    large one; a block never moves between pools or streams.
//  - get_allocation_size: a miss reserves a 2 MiB segment (kSmallBuffer) for the small pool, a
//    20 MiB one (kLargeBuffer) for requests under 10 MiB (kMinLargeAlloc), else the request
//    rounded up to 2 MiB (kRoundLarge).
//  - get_free_block: the smallest free block of the pool and stream that is large enough; with
//    max_split_size, a request below it never takes a block at or above it, and a request at or
//    above it never takes a block 20 MiB (kLargeBuffer) larger than itself.
//  - should_split: small pool, or expandable segments: when 512 B or more remain; large pool:
//    when the request is below max_split_size and more than 1 MiB remains.
//  - free_block: a freed block merges with free neighbours of its segment.
//  - Out of memory (the device refuses the segment): release_available_cached_blocks (only with
//    max_split_size: the smallest free oversize segment that covers the request, else oversize
//    segments largest first), retry; release_cached_blocks (every free whole segment; free pages
//    of expandable segments), retry; then OutOfMemoryError.
//  - garbage_collection_threshold: before reserving a new segment, when reserved exceeds the
//    threshold times the allowed memory, free whole large-pool segments not reused for at least
//    the average age, until reserved is back under the threshold (PyTorch does this only when a
//    per-process memory fraction is set; the model takes the device's usable bytes as that
//    allowance).
//  - expandable_segments: one growing segment per stream and pool, mapped in 2 MiB (small) or
//    20 MiB (large) pages; a miss maps just the pages the request needs beyond a free block at
//    the end of the mapped range; freeing unmaps nothing until the cache is released.
#include "allocator.h"

#include "timeline.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace shardscope {

namespace {

constexpr uint64_t kMiB = 1024ull * 1024ull;
constexpr uint64_t kMinBlockSize = 512;
constexpr uint64_t kSmallSize = 1 * kMiB;
constexpr uint64_t kSmallBuffer = 2 * kMiB;
constexpr uint64_t kMinLargeAlloc = 10 * kMiB;
constexpr uint64_t kLargeBuffer = 20 * kMiB;
constexpr uint64_t kRoundLarge = 2 * kMiB;
constexpr uint64_t kNpuPad = 32;
/// Beyond a request's bytes, what a miss can reserve at most: the rounding (NPU pad and 512 B)
/// and a 20 MiB segment or page above it (allocationSize, expandable pages).
constexpr double kMissSlack = double(kLargeBuffer + kRoundLarge + 1024);

uint64_t roundUp(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

uint64_t toBytes(double b)
{
    if (!(b > 0))
        return 0;
    if (b >= 9.0e18)
        return uint64_t(9.0e18);
    // ceil without the libm call: truncation is floor here, and exact (a double at or above
    // 2^53 is a whole number; below, every integer is a double).
    const uint64_t whole = uint64_t(b);
    return whole + (double(whole) < b ? 1 : 0);
}

} // namespace

CachingAllocator::CachingAllocator(AllocatorRules rules, const AllocatorConfig &config, double capacity,
                                   double allowed)
    : rules_(rules), config_(config),
      capacity_(std::isfinite(capacity) ? toBytes(capacity) : std::numeric_limits<uint64_t>::max()),
      allowed_(allowed > 0 && std::isfinite(allowed) ? toBytes(allowed) : capacity_),
      maxSplit_(config.max_split_size_mb <= 0 ? std::numeric_limits<uint64_t>::max()
                                              : uint64_t(config.max_split_size_mb * double(kMiB)))
{
    blocks_.reserve(1024);
}

void CachingAllocator::setCapacity(double capacity)
{
    capacity_ = std::isfinite(capacity) ? toBytes(capacity) : std::numeric_limits<uint64_t>::max();
}

double CachingAllocator::missBytes(double bytes, int stream) const
{
    const uint64_t size = roundSize(toBytes(bytes));
    const bool small = size <= kSmallSize;
    if (lookupFree(small, stream, size) >= 0)
        return 0;
    if (!config_.expandable_segments)
        return double(allocationSize(size));
    const uint64_t page = small ? kSmallBuffer : kLargeBuffer;
    for (const Segment &s : segments_) {
        if (s.live && s.expandable && s.small == small && s.stream == stream) {
            const Block &t = blocks_[size_t(s.last)];
            const uint64_t have = t.allocated ? 0 : t.size;
            return double(roundUp(size - std::min(size, have), page));
        }
    }
    return double(roundUp(size, page));
}

double CachingAllocator::missBytesBound(double bytes) const
{
    const uint64_t size = roundSize(toBytes(bytes));
    if (!config_.expandable_segments)
        return double(allocationSize(size));
    return double(roundUp(size, size <= kSmallSize ? kSmallBuffer : kLargeBuffer));
}

uint64_t CachingAllocator::roundSize(uint64_t bytes) const
{
    if (rules_ == AllocatorRules::Npu)
        bytes += kNpuPad;
    if (bytes < kMinBlockSize)
        return kMinBlockSize;
    return roundUp(bytes, kMinBlockSize);
}

uint64_t CachingAllocator::allocationSize(uint64_t rounded)
{
    if (rounded <= kSmallSize)
        return kSmallBuffer;
    if (rounded < kMinLargeAlloc)
        return kLargeBuffer;
    return roundUp(rounded, kRoundLarge);
}

int CachingAllocator::segments() const
{
    int n = 0;
    for (const Segment &s : segments_)
        n += s.live && s.size > 0 ? 1 : 0;
    return n;
}

int CachingAllocator::lookupFree(bool small, int stream, uint64_t size) const
{
    const std::optional<Key> it = (small ? small_ : large_).first(stream, size);
    return it && takes(*it, stream, size) ? it->block : -1;
}

bool CachingAllocator::takes(const Key &k, int stream, uint64_t size) const
{
    if (k.stream != stream)
        return false;
    const uint64_t ms = maxSplit();
    if (size < ms && k.size >= ms)
        return false;
    return !(size >= ms && k.size >= size + kLargeBuffer);
}

bool CachingAllocator::reserve(uint64_t bytes)
{
    if (bytes > capacity_ || reserved_ > capacity_ - bytes)
        return false;
    reserved_ += bytes;
    ++changes_;
    peakReserved_ = std::max(peakReserved_, reserved_);
    return true;
}

int CachingAllocator::newSegment(bool small, int stream, uint64_t size)
{
    if (!reserve(size))
        return -1;
    // A segment's addresses never overlap another's: give each its own range.
    static constexpr uint64_t kSpan = 1ull << 44;
    Segment seg;
    seg.size = size;
    seg.stream = stream;
    seg.small = small;
    segments_.push_back(seg);
    const int si = int(segments_.size()) - 1;
    const int b = newBlock();
    Block &k = blocks_[size_t(b)];
    k = Block{};
    k.addr = uint64_t(si) * kSpan;
    k.size = size;
    k.segment = si;
    k.stream = stream;
    k.small = small;
    segments_[size_t(si)].last = b;
    return b;
}

int CachingAllocator::expand(bool small, int stream, uint64_t size)
{
    const uint64_t page = small ? kSmallBuffer : kLargeBuffer;
    int si = -1;
    for (size_t i = 0; i < segments_.size(); ++i) {
        const Segment &s = segments_[i];
        if (s.live && s.expandable && s.small == small && s.stream == stream) {
            si = int(i);
            break;
        }
    }
    if (si < 0) {
        const int b = newSegment(small, stream, roundUp(size, page));
        if (b >= 0)
            segments_[size_t(blocks_[size_t(b)].segment)].expandable = true;
        return b;
    }
    // Map what the request needs beyond the free block at the end of the mapped range.
    Segment &seg = segments_[size_t(si)];
    const int tail = seg.last;
    const bool tailFree = tail >= 0 && !blocks_[size_t(tail)].allocated;
    const uint64_t have = tailFree ? blocks_[size_t(tail)].size : 0;
    const uint64_t more = roundUp(size - std::min(size, have), page);
    if (!reserve(more))
        return -1;
    seg.size += more;
    if (tailFree) {
        pool(small).erase(tail);
        blocks_[size_t(tail)].size += more;
        return tail;
    }
    const int b = newBlock();
    const Block &t = blocks_[size_t(tail)];
    Block k;
    k.addr = t.addr + t.size;
    k.size = more;
    k.segment = si;
    k.stream = stream;
    k.small = small;
    k.prev = tail;
    blocks_[size_t(b)] = k;
    blocks_[size_t(tail)].next = b;
    seg.last = b;
    return b;
}

int CachingAllocator::take(int b, uint64_t size)
{
    Block &k = blocks_[size_t(b)];
    const uint64_t remaining = k.size - size;
    const bool expandable = segments_[size_t(k.segment)].expandable;
    const bool split = (k.small || expandable) ? remaining >= kMinBlockSize
                                               : (size < maxSplit() && remaining > kSmallSize);
    if (split) {
        const int r = newBlock();
        Block &blk = blocks_[size_t(b)]; // emplace_back may have moved the vector
        Block rest;
        rest.addr = blk.addr + size;
        rest.size = remaining;
        rest.segment = blk.segment;
        rest.stream = blk.stream;
        rest.small = blk.small;
        rest.prev = b;
        rest.next = blk.next;
        rest.freedAt = lookups_;
        if (blk.next >= 0)
            blocks_[size_t(blk.next)].prev = r;
        blk.next = r;
        blk.size = size;
        blocks_[size_t(r)] = rest;
        Segment &seg = segments_[size_t(rest.segment)];
        if (seg.last == b)
            seg.last = r;
        pool(rest.small).insert(keyOf(r));
    }
    Block &blk = blocks_[size_t(b)];
    blk.allocated = true;
    allocated_ += blk.size;
    return b;
}

void CachingAllocator::releaseSegment(int si)
{
    Segment &seg = segments_[size_t(si)];
    const int b = seg.last;
    pool(seg.small).erase(b);
    reserved_ -= seg.size;
    ++changes_;
    seg.size = 0;
    seg.live = false;
    freeIds_.push_back(b);
}

bool CachingAllocator::releaseAvailable(bool small, int stream, uint64_t size)
{
    const uint64_t ms = maxSplit();
    if (ms == std::numeric_limits<uint64_t>::max() || small)
        return false;
    BlockPool &p = pool(false);
    const uint64_t key = std::max(size, ms);
    // The smallest oversize segment that covers the request, else oversize ones largest first.
    const std::optional<Key> it = p.first(stream, key);
    if (it && it->stream == stream) {
        const Block &k = blocks_[size_t(it->block)];
        if (k.prev < 0 && k.next < 0 && !segments_[size_t(k.segment)].expandable) {
            releaseSegment(k.segment);
            return true;
        }
    }
    uint64_t freed = 0;
    std::vector<int> victims;
    const std::vector<Key> keys = p.blocks();
    for (auto r = keys.rbegin(); r != keys.rend() && freed < key; ++r) {
        if (r->stream != stream || r->size < ms)
            continue;
        const Block &k = blocks_[size_t(r->block)];
        if (k.prev < 0 && k.next < 0 && !segments_[size_t(k.segment)].expandable) {
            victims.push_back(k.segment);
            freed += k.size;
        }
    }
    for (int s : victims)
        releaseSegment(s);
    return freed >= key;
}

void CachingAllocator::releaseAll()
{
    for (size_t si = 0; si < segments_.size(); ++si) {
        Segment &seg = segments_[si];
        if (!seg.live)
            continue;
        if (seg.expandable) {
            // Unmap the free pages at the end of the mapped range.
            const int tail = seg.last;
            Block &t = blocks_[size_t(tail)];
            if (t.allocated)
                continue;
            const uint64_t page = seg.small ? kSmallBuffer : kLargeBuffer;
            const uint64_t unmap = t.size / page * page;
            if (unmap == 0)
                continue;
            pool(seg.small).erase(tail);
            reserved_ -= unmap;
            ++changes_;
            seg.size -= unmap;
            t.size -= unmap;
            if (t.size == 0) {
                if (t.prev >= 0) {
                    blocks_[size_t(t.prev)].next = -1;
                    seg.last = t.prev;
                    freeIds_.push_back(tail);
                } else {
                    seg.live = false;
                    freeIds_.push_back(tail);
                }
            } else {
                pool(seg.small).insert(keyOf(tail));
            }
            continue;
        }
        const Block &k = blocks_[size_t(seg.last)];
        if (!k.allocated && k.prev < 0 && k.next < 0)
            releaseSegment(int(si));
    }
}

void CachingAllocator::collectGarbage()
{
    if (!collectsGarbage())
        return;
    const uint64_t threshold = uint64_t(config_.garbage_collection_threshold * double(allowed_));
    if (reserved_ <= threshold)
        return;
    const uint64_t target = reserved_ - threshold;
    uint64_t freed = 0;
    while (freed < target) {
        // Free whole large-pool segments at least as old (unused) as the average.
        double sum = 0;
        int n = 0;
        const std::vector<Key> keys = large_.blocks();
        for (const Key &key : keys) {
            const Block &k = blocks_[size_t(key.block)];
            if (k.prev < 0 && k.next < 0 && !segments_[size_t(k.segment)].expandable) {
                sum += double(lookups_ - k.freedAt);
                ++n;
            }
        }
        if (n == 0)
            return;
        const double average = sum / n;
        std::vector<int> victims;
        for (const Key &key : keys) {
            const Block &k = blocks_[size_t(key.block)];
            if (k.prev < 0 && k.next < 0 && !segments_[size_t(k.segment)].expandable &&
                double(lookups_ - k.freedAt) >= average) {
                victims.push_back(k.segment);
                freed += k.size;
                if (freed >= target)
                    break;
            }
        }
        if (victims.empty())
            return;
        for (int s : victims)
            releaseSegment(s);
    }
}

int CachingAllocator::malloc(double bytes, int stream)
{
    const uint64_t size = roundSize(toBytes(bytes));
    const bool small = size <= kSmallSize;
    ++lookups_;
    BlockPool &p = pool(small);
    if (const auto f = p.first(stream, size); f && takes(*f, stream, size)) {
        p.erase(f->block);
        return take(f->block, size);
    }
    collectGarbage();
    auto reserveNew = [&]() {
        return config_.expandable_segments ? expand(small, stream, size)
                                           : newSegment(small, stream, allocationSize(size));
    };
    int b = reserveNew();
    if (b < 0 && releaseAvailable(small, stream, size))
        b = reserveNew();
    if (b < 0) {
        releaseAll();
        b = reserveNew();
        if (b >= 0)
            ++retries_;
    }
    if (b < 0)
        return -1;
    return take(b, size);
}

void CachingAllocator::free(int b)
{
    if (b < 0 || size_t(b) >= blocks_.size() || !blocks_[size_t(b)].allocated)
        return;
    Block &k = blocks_[size_t(b)];
    k.allocated = false;
    allocated_ -= k.size;
    BlockPool &p = pool(k.small);
    Segment &seg = segments_[size_t(k.segment)];
    // Merge with free neighbours (`right` in the pool unless it is the block being freed).
    auto mergeNext = [&](int left, int right) {
        Block &l = blocks_[size_t(left)];
        Block &r = blocks_[size_t(right)];
        if (right != b)
            p.erase(right);
        l.size += r.size;
        l.next = r.next;
        if (r.next >= 0)
            blocks_[size_t(r.next)].prev = left;
        if (seg.last == right)
            seg.last = left;
        freeIds_.push_back(right);
    };
    int cur = b;
    const int next = blocks_[size_t(cur)].next;
    if (next >= 0 && !blocks_[size_t(next)].allocated)
        mergeNext(cur, next);
    const int prev = blocks_[size_t(cur)].prev;
    if (prev >= 0 && !blocks_[size_t(prev)].allocated) {
        p.erase(prev);
        mergeNext(prev, cur);
        cur = prev;
    }
    blocks_[size_t(cur)].freedAt = lookups_;
    p.insert(keyOf(cur));
}

namespace {

/// One allocator following the timeline.
struct Follower
{
    CachingAllocator alloc;
    std::vector<int> block;
    ReplayResult result;
    bool keepCurve = false;
    bool stopped = false;
    double steadyAllocated = 0;

    void step(const StepTimeline &t, size_t e, StepPart part)
    {
        if (stopped)
            return;
        const TimelineEvent &ev = t.events[e];
        const TimelineTensor &tt = t.tensors[size_t(ev.tensor)];
        if (ev.alloc) {
            const int b = alloc.malloc(tt.bytes, int(streamOf(tt.kind)));
            if (b < 0) {
                result.oom = true;
                result.oom_event = int(e);
                stopped = true;
                return;
            }
            block[size_t(ev.tensor)] = b;
        } else {
            alloc.free(block[size_t(ev.tensor)]);
            block[size_t(ev.tensor)] = -1;
        }
        if (part == StepPart::SteadyStep)
            steadyAllocated = std::max(steadyAllocated, alloc.allocatedBytes());
        if (keepCurve)
            result.reserved.push_back(float(alloc.reservedBytes()));
    }
    void enterSteady()
    {
        if (stopped)
            return;
        result.first_step_reserved = alloc.peakReservedBytes();
        alloc.resetPeak(); // torch.cuda.reset_peak_memory_stats() before the step
    }
    void finish(StepPart part)
    {
        if (part != StepPart::SteadyStep || (stopped && result.first_step_reserved == 0))
            result.first_step_reserved = alloc.peakReservedBytes();
        result.peak_reserved = part == StepPart::SteadyStep && !result.oom ? alloc.peakReservedBytes() : 0.0;
        result.peak_allocated = steadyAllocated;
        result.retries = alloc.retries();
    }
};

/// Whether the run of events [a, b) frees every tensor it allocates and nothing allocated
/// before it.
bool selfContained(const StepTimeline &t, int a, int b)
{
    for (int e = a; e < b; ++e) {
        const TimelineTensor &tt = t.tensors[size_t(t.events[size_t(e)].tensor)];
        if (tt.alloc_event < a || tt.free_event < a || tt.free_event >= b)
            return false;
    }
    return true;
}

/// Whether the runs of `len` events from `a` and from `c` list the same requests: the same
/// sizes on the same streams, each freed at the same place in its run.
bool alikeRuns(const StepTimeline &t, int a, int c, int len)
{
    for (int r = 0; r < len; ++r) {
        const TimelineEvent &x = t.events[size_t(a + r)];
        const TimelineEvent &y = t.events[size_t(c + r)];
        const TimelineTensor &tx = t.tensors[size_t(x.tensor)];
        const TimelineTensor &ty = t.tensors[size_t(y.tensor)];
        if (x.alloc != y.alloc || tx.bytes != ty.bytes || streamOf(tx.kind) != streamOf(ty.kind) ||
            tx.alloc_event - a != ty.alloc_event - c || tx.free_event - a != ty.free_event - c)
            return false;
    }
    return true;
}

DualReplay replay(const StepTimeline &t, AllocatorRules rules, const AllocatorConfig &config,
                  double roomCapacity, double deviceCapacity, bool keepCurve, bool stopAtOom = false)
{
    const bool dual = std::isfinite(deviceCapacity);
    const double allowed = dual ? deviceCapacity : roomCapacity;
    Follower room{CachingAllocator(rules, config, roomCapacity, allowed), std::vector<int>(t.tensors.size(), -1), {}};
    room.keepCurve = keepCurve;
    if (keepCurve)
        room.result.reserved.reserve(t.events.size());
    std::optional<Follower> device;
    size_t mark = 0;
    StepPart part = StepPart::Setup;
    // Alike runs (StepTimeline::repeats). The allocator's free blocks are exactly the gaps
    // between its allocated blocks in its segments (a free block merges with free neighbours;
    // a split leaves the rest next to the block taken), so its state follows from its segments
    // and its allocated blocks. A run that frees all it allocates and nothing else, and reserves
    // and releases nothing, leaves that state as it found it; the next alike run, from the same
    // state, does the same again, and so do the rest: they are passed over. Not with garbage
    // collection (a free ages blocks) or once the device's replay has forked.
    const bool passOver = !room.alloc.collectsGarbage() && !t.repeats.empty();
    size_t rep = 0;                 // the repeat whose runs come next
    size_t check = passOver ? size_t(t.repeats[0].begin) : SIZE_MAX; // where the next run starts
    int unitStart = -1;             // where the run just replayed began
    uint64_t unitChanges = 0;       // the room's reservation changes then
    const size_t n = t.events.size();
    bool stop = false;
    for (size_t e = 0; e < n && !stop;) {
        while (mark < t.marks.size() && size_t(t.marks[mark].event) <= e) {
            const StepPart next = t.marks[mark].part;
            if (next != part && next == StepPart::SteadyStep) {
                room.enterSteady();
                if (device)
                    device->enterSteady();
            }
            part = next;
            ++mark;
        }
        if (e == check) {
            const RepeatSpan &r = t.repeats[rep];
            const int here = int(e);
            const int end = r.begin + r.units * r.unit_events;
            bool pass = unitStart >= 0 && unitStart == here - r.unit_events && !device && !room.stopped &&
                        room.alloc.reservationChanges() == unitChanges && selfContained(t, unitStart, here);
            for (size_t m = mark; pass && m < t.marks.size() && t.marks[m].event < end; ++m)
                pass = t.marks[m].part == part;
            for (int c = here; pass && c < end; c += r.unit_events)
                pass = alikeRuns(t, unitStart, c, r.unit_events);
            if (pass) {
                if (keepCurve)
                    room.result.reserved.insert(room.result.reserved.end(), size_t(end - here),
                                                float(room.alloc.reservedBytes()));
                while (mark < t.marks.size() && t.marks[mark].event < end)
                    ++mark;
                room.result.passed_events += end - here;
                unitStart = -1;
                ++rep;
                check = rep < t.repeats.size() ? size_t(t.repeats[rep].begin) : SIZE_MAX;
                e = size_t(end);
                continue;
            }
            unitStart = here;
            unitChanges = room.alloc.reservationChanges();
            check = e + size_t(r.unit_events);
            if (check >= size_t(end)) {
                ++rep;
                check = rep < t.repeats.size() ? size_t(t.repeats[rep].begin) : SIZE_MAX;
            }
        }
        // The events up to the next mark or run: the allocators' work and nothing else.
        const size_t until = std::min({n, check, mark < t.marks.size() ? size_t(t.marks[mark].event) : n});
        for (; e < until; ++e) {
            const TimelineEvent &ev = t.events[e];
            if (dual && !device && ev.alloc) {
                const TimelineTensor &tt = t.tensors[size_t(ev.tensor)];
                // The cache is looked at only when a miss could pass the device's capacity (a
                // miss reserves at most the request, rounded, plus a 20 MiB segment's or page's
                // slack).
                const double reserved = room.alloc.reservedBytes();
                if (reserved + tt.bytes + kMissSlack > deviceCapacity &&
                    reserved + room.alloc.missBytesBound(tt.bytes) > deviceCapacity &&
                    reserved + room.alloc.missBytes(tt.bytes, int(streamOf(tt.kind))) > deviceCapacity) {
                    device = room; // the same state, from here on against the device's capacity
                    device->alloc.setCapacity(deviceCapacity);
                    device->keepCurve = false;
                }
            }
            room.step(t, e, part);
            if (device)
                device->step(t, e, part);
            if (room.stopped || (stopAtOom && device && device->stopped)) {
                stop = true;
                break;
            }
        }
    }
    room.finish(part);
    DualReplay out;
    out.room = std::move(room.result);
    if (device) {
        device->finish(part);
        out.device = std::move(device->result);
        out.device.reserved.clear();
    } else {
        out.device = out.room;
        out.device.reserved.clear();
    }
    return out;
}

} // namespace

ReplayResult replayTimeline(const StepTimeline &t, AllocatorRules rules, const AllocatorConfig &config,
                            double capacity, bool keepCurve)
{
    return replay(t, rules, config, capacity, std::numeric_limits<double>::infinity(), keepCurve).room;
}

DualReplay replayOnDevice(const StepTimeline &t, AllocatorRules rules, const AllocatorConfig &config,
                          double capacity, bool keepCurve, bool stopAtOom)
{
    return replay(t, rules, config, std::numeric_limits<double>::infinity(), capacity, keepCurve, stopAtOom);
}

} // namespace shardscope
