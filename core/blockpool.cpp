#include "blockpool.h"

#include <algorithm>
#include <bit>

namespace shardscope {

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
