#include "blockpool.h"

#include <algorithm>
#include <bit>

namespace shardscope {

namespace {

template <class V>
auto sizeAt(V &bin, uint64_t size)
{
    return std::lower_bound(bin.begin(), bin.end(), size, [](const auto &c, uint64_t s) { return c.size < s; });
}

} // namespace

int BlockPool::nextBin(const Stream &s, int bin)
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

std::optional<FreeBlock> BlockPool::first(int stream, uint64_t size) const
{
    if (stream < 0 || size_t(stream) >= streams_.size())
        return std::nullopt;
    const Stream &s = streams_[size_t(stream)];
    int bin = binOf(size);
    int cls = -1;
    if (s.inGroup[size_t(bin / 16)] & (1u << (bin % 16))) {
        // Its own bin: the first size of at least `size`, else the next bin's first.
        const std::vector<Sized> &v = s.bins[size_t(bin)];
        const auto it = sizeAt(v, size);
        if (it != v.end())
            cls = it->cls;
        else
            bin = nextBin(s, bin + 1);
    } else {
        bin = nextBin(s, bin);
    }
    if (cls < 0) {
        if (bin < 0)
            return std::nullopt;
        cls = s.bins[size_t(bin)].front().cls;
    }
    const Class &c = classes_[size_t(cls)];
    const Entry &e = c.heap.front();
    return FreeBlock{stream, c.size, e.addr, e.block};
}

void BlockPool::siftUp(int cls, size_t pos, Entry e)
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

void BlockPool::siftDown(int cls, size_t pos, Entry e)
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

void BlockPool::insert(const FreeBlock &b)
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
    const auto at = sizeAt(v, b.size);
    int cls;
    if (at != v.end() && at->size == b.size) {
        cls = at->cls;
    } else {
        if (!spare_.empty()) {
            cls = spare_.back();
            spare_.pop_back();
        } else {
            cls = int(classes_.size());
            classes_.emplace_back();
        }
        Class &c = classes_[size_t(cls)];
        c.stream = b.stream;
        c.size = b.size;
        v.insert(at, Sized{b.size, cls});
        s.inGroup[size_t(bin / 16)] |= uint16_t(1u << (bin % 16));
        s.groups |= 1ull << (bin / 16);
    }
    std::vector<Entry> &h = classes_[size_t(cls)].heap;
    h.push_back(Entry{b.addr, b.block});
    if (h.size() == 1)
        where_[size_t(b.block)] = Where{cls, 0};
    else
        siftUp(cls, h.size() - 1, h.back());
    ++count_;
}

void BlockPool::erase(int block)
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
    // The class is empty: out of its bin (and the bin out of the bitmap when it empties too).
    Stream &s = streams_[size_t(c.stream)];
    const int bin = binOf(c.size);
    std::vector<Sized> &v = s.bins[size_t(bin)];
    v.erase(sizeAt(v, c.size));
    if (v.empty()) {
        uint16_t &group = s.inGroup[size_t(bin / 16)];
        group = uint16_t(group & ~(1u << (bin % 16)));
        if (group == 0)
            s.groups &= ~(1ull << (bin / 16));
    }
    spare_.push_back(w.cls);
}

std::vector<FreeBlock> BlockPool::blocks() const
{
    std::vector<FreeBlock> out;
    out.reserve(count_);
    for (size_t id = 0; id < streams_.size(); ++id) {
        const Stream &s = streams_[id];
        for (int bin = nextBin(s, 0); bin >= 0; bin = nextBin(s, bin + 1)) {
            for (const Sized &z : s.bins[size_t(bin)]) {
                const Class &c = classes_[size_t(z.cls)];
                const size_t from = out.size();
                for (const Entry &e : c.heap)
                    out.push_back(FreeBlock{int(id), c.size, e.addr, e.block});
                std::sort(out.begin() + long(from), out.end(),
                          [](const FreeBlock &a, const FreeBlock &b) { return a.addr < b.addr; });
            }
        }
    }
    return out;
}

} // namespace shardscope
