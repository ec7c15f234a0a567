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
// request is the root of the first class of at least its size, in its own bin or the next that
// holds any (two bit scans); removing a block is a sift from its known slot.
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
        std::array<std::vector<Sized>, kBins> bins; ///< each bin's classes, by size
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
    void siftUp(int cls, size_t pos, Entry e);
    void siftDown(int cls, size_t pos, Entry e);

    std::vector<Stream> streams_; ///< by stream id
    std::vector<Class> classes_;
    std::vector<int> spare_;   ///< emptied classes, for reuse
    std::vector<Where> where_; ///< by block id
    size_t count_ = 0;
};

} // namespace shardscope
