#pragma once

// The caching allocator's free blocks (core/allocator.h) in best-fit order: by stream, then
// size, then address, the order of PyTorch's BlockPool (a std::set compared by stream, size and
// address) and torch_npu's.
//
// A replay's pool holds a few hundred free blocks, of about a hundred distinct sizes, some sizes
// with dozens of blocks, and a search replays millions of events through it. So each stream's
// sizes are binned as a two-level segregated fit does it: 16 bins to every power of two (a
// bin's sizes within 1/16 of each other), a bitmap of the bins that hold blocks, and in each
// bin its few sizes in order. Each size is a class whose blocks are a binary min-heap by
// address, and every block's place (class and heap slot) is kept by its id. The best fit for a
// request is the root of the first class of at least its size that holds blocks, in its own bin
// or the next that holds any (two bit scans); removing a block is a sift from its known slot.
// A class that empties stays in its bin, since the same size is usually freed again soon (a
// block taken and given back): only the bin's count of classes with blocks goes down. (The
// Llama-3-70B search's 193 replays made 2,742 classes in all, against 3 million inserts.)
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <optional>
#include <vector>

namespace shardscope {

/// A free block as the pool orders it.
struct FreeBlock
{
    int stream = 0;
    uint64_t size = 0, addr = 0;
    int block = -1; ///< the allocator's block id
};

class BlockPool
{
public:
    size_t size() const { return count_; }
    bool contains(int block) const
    {
        return block >= 0 && size_t(block) < where_.size() && where_[size_t(block)].cls >= 0;
    }
    /// The first free block of `stream` at least (size, address 0) in best-fit order: the lowest
    /// address among its smallest blocks of at least `size` bytes; none when it has none.
    std::optional<FreeBlock> first(int stream, uint64_t size) const;
    /// Adds a block; nothing when its id is there already. Addresses are unique among blocks.
    void insert(const FreeBlock &b);
    /// Removes the block with this id; nothing when it is not there.
    void erase(int block);
    /// Every block, in best-fit order.
    std::vector<FreeBlock> blocks() const;

    /// The bin of a size: 0-15 for sizes below 16, then 16 bins to every power of two, in the
    /// order of the sizes (a larger size never has a smaller bin).
    static int binOf(uint64_t size)
    {
        if (size < 16)
            return int(size);
        const int log = 63 - std::countl_zero(size); // 4..63
        return (log - 3) * 16 + int((size >> (log - 4)) & 15);
    }
    static constexpr int kBins = 1024;

private:
    struct Entry
    {
        uint64_t addr;
        int block;
    };
    struct Class
    {
        int stream = 0;
        uint64_t size = 0;
        std::vector<Entry> heap; ///< min-heap by address
    };
    struct Sized
    {
        uint64_t size;
        int cls;
    };
    struct Stream
    {
        std::array<std::vector<Sized>, kBins> bins; ///< each bin's classes, by size, empty ones too
        std::array<uint16_t, kBins> holding{};      ///< each bin's classes that hold blocks
        uint64_t groups = 0;                        ///< bit g: a bin of group g holds blocks
        std::array<uint16_t, kBins / 16> inGroup{}; ///< bit i of group g: bin 16 g + i does
    };
    struct Where
    {
        int cls = -1; ///< -1: not in the pool
        int pos = -1;
    };
    /// The first bin at or after `bin` that holds blocks, -1 for none.
    static int nextBin(const Stream &s, int bin);
    /// The first class from `it` in its bin that holds blocks, -1 for none.
    int holdingFrom(std::vector<Sized>::const_iterator it,
                    std::vector<Sized>::const_iterator end) const
    {
        for (; it != end; ++it)
            if (!classes_[size_t(it->cls)].heap.empty())
                return it->cls;
        return -1;
    }
    void siftUp(int cls, size_t pos, Entry e);
    void siftDown(int cls, size_t pos, Entry e);

    std::vector<Stream> streams_; ///< by stream id
    std::vector<Class> classes_;
    std::vector<Where> where_; ///< by block id
    size_t count_ = 0;
};

// The pool's work per request, inline: the allocator calls it for every event it replays.
namespace blockpool_detail {

template <class V> inline auto sizeAt(V &bin, uint64_t size)
{
    return std::lower_bound(bin.begin(), bin.end(), size,
                            [](const auto &c, uint64_t s) { return c.size < s; });
}

} // namespace blockpool_detail

inline int BlockPool::nextBin(const Stream &s, int bin)
{
    if (bin >= kBins)
        return -1;
    const int group = bin / 16;
    const unsigned here = unsigned(s.inGroup[size_t(group)]) & (~0u << (bin % 16));
    if (here != 0)
        return group * 16 + std::countr_zero(here);
    if (group + 1 >= kBins / 16)
        return -1;
    const uint64_t later = s.groups & (~0ull << (group + 1));
    if (later == 0)
        return -1;
    const int g = std::countr_zero(later);
    return g * 16 + std::countr_zero(unsigned(s.inGroup[size_t(g)]));
}

inline std::optional<FreeBlock> BlockPool::first(int stream, uint64_t size) const
{
    if (stream < 0 || size_t(stream) >= streams_.size())
        return std::nullopt;
    const Stream &s = streams_[size_t(stream)];
    int bin = binOf(size);
    int cls = -1;
    if (s.inGroup[size_t(bin / 16)] & (1u << (bin % 16))) {
        // Its own bin: the first size of at least `size` with blocks, else the next bin's first.
        const std::vector<Sized> &v = s.bins[size_t(bin)];
        cls = holdingFrom(blockpool_detail::sizeAt(v, size), v.end());
        if (cls < 0)
            bin = nextBin(s, bin + 1);
    } else {
        bin = nextBin(s, bin);
    }
    if (cls < 0) {
        if (bin < 0)
            return std::nullopt;
        const std::vector<Sized> &v = s.bins[size_t(bin)];
        cls = holdingFrom(v.begin(), v.end());
    }
    const Class &c = classes_[size_t(cls)];
    const Entry &e = c.heap.front();
    return FreeBlock{stream, c.size, e.addr, e.block};
}

inline void BlockPool::siftUp(int cls, size_t pos, Entry e)
{
    Entry *h = classes_[size_t(cls)].heap.data();
    while (pos > 0) {
        const size_t parent = (pos - 1) / 2;
        if (h[parent].addr < e.addr)
            break;
        h[pos] = h[parent];
        where_[size_t(h[pos].block)].pos = int(pos);
        pos = parent;
    }
    h[pos] = e;
    where_[size_t(e.block)] = Where{cls, int(pos)};
}

inline void BlockPool::siftDown(int cls, size_t pos, Entry e)
{
    Entry *h = classes_[size_t(cls)].heap.data();
    const size_t n = classes_[size_t(cls)].heap.size();
    for (;;) {
        size_t child = 2 * pos + 1;
        if (child >= n)
            break;
        if (child + 1 < n && h[child + 1].addr < h[child].addr)
            ++child;
        if (e.addr < h[child].addr)
            break;
        h[pos] = h[child];
        where_[size_t(h[pos].block)].pos = int(pos);
        pos = child;
    }
    h[pos] = e;
    where_[size_t(e.block)] = Where{cls, int(pos)};
}

inline void BlockPool::insert(const FreeBlock &b)
{
    if (b.stream < 0 || b.block < 0 || contains(b.block))
        return;
    if (size_t(b.block) >= where_.size())
        where_.resize(std::max(size_t(b.block) + 1, 2 * where_.size()));
    if (size_t(b.stream) >= streams_.size())
        streams_.resize(size_t(b.stream) + 1);
    Stream &s = streams_[size_t(b.stream)];
    const int bin = binOf(b.size);
    std::vector<Sized> &v = s.bins[size_t(bin)];
    const auto at = blockpool_detail::sizeAt(v, b.size);
    int cls;
    if (at != v.end() && at->size == b.size) {
        cls = at->cls;
    } else {
        cls = int(classes_.size());
        classes_.push_back(Class{b.stream, b.size, {}});
        v.insert(at, Sized{b.size, cls});
    }
    std::vector<Entry> &h = classes_[size_t(cls)].heap;
    if (h.empty() && s.holding[size_t(bin)]++ == 0) {
        s.inGroup[size_t(bin / 16)] |= uint16_t(1u << (bin % 16));
        s.groups |= 1ull << (bin / 16);
    }
    h.push_back(Entry{b.addr, b.block});
    if (h.size() == 1)
        where_[size_t(b.block)] = Where{cls, 0};
    else
        siftUp(cls, h.size() - 1, h.back());
    ++count_;
}

inline void BlockPool::erase(int block)
{
    if (!contains(block))
        return;
    const Where w = where_[size_t(block)];
    where_[size_t(block)] = Where{};
    --count_;
    Class &c = classes_[size_t(w.cls)];
    const Entry last = c.heap.back();
    c.heap.pop_back();
    const size_t pos = size_t(w.pos);
    if (pos < c.heap.size()) {
        // The last entry fills the emptied slot, then moves up or down to its place.
        if (pos > 0 && last.addr < c.heap[(pos - 1) / 2].addr)
            siftUp(w.cls, pos, last);
        else
            siftDown(w.cls, pos, last);
        return;
    }
    if (!c.heap.empty())
        return;
    // The class is empty: it stays in its bin; the bin leaves the bitmap when no class of it
    // holds blocks.
    Stream &s = streams_[size_t(c.stream)];
    const int bin = binOf(c.size);
    if (--s.holding[size_t(bin)] == 0) {
        uint16_t &group = s.inGroup[size_t(bin / 16)];
        group = uint16_t(group & ~(1u << (bin % 16)));
        if (group == 0)
            s.groups &= ~(1ull << (bin / 16));
    }
}

} // namespace shardscope
