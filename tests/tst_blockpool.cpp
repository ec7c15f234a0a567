// The caching allocator's free-block pool (core/blockpool.h): the best-fit order of PyTorch's
// BlockPool, checked against a std::set with that order over random operations shaped like a
// replay's (a few sizes with many blocks, many sizes with one, three streams, sizes across the
// bins and their edges), and the bins' order by hand.
#include "core/blockpool.h"

#include <QTest>
#include <cstdint>
#include <random>
#include <set>
#include <tuple>

using namespace shardscope;

namespace {

struct Ref
{
    bool operator()(const FreeBlock &a, const FreeBlock &b) const
    {
        return std::tie(a.stream, a.size, a.addr) < std::tie(b.stream, b.size, b.addr);
    }
};

/// The reference's answer: the first block at least (stream, size, 0) on that stream.
std::optional<FreeBlock> refFirst(const std::set<FreeBlock, Ref> &ref, int stream, uint64_t size)
{
    const auto it = ref.lower_bound(FreeBlock{stream, size, 0, -1});
    if (it == ref.end() || it->stream != stream)
        return std::nullopt;
    return *it;
}

bool same(const std::optional<FreeBlock> &a, const std::optional<FreeBlock> &b)
{
    if (!a || !b)
        return !a && !b;
    return a->stream == b->stream && a->size == b->size && a->addr == b->addr && a->block == b->block;
}

} // namespace

class TestBlockPool : public QObject
{
    Q_OBJECT

private slots:
    // Sizes in order never fall into an earlier bin; below 16 a size is its bin, and a power
    // of two starts a run of 16.
    void binsFollowSizes()
    {
        QCOMPARE(BlockPool::binOf(0), 0);
        QCOMPARE(BlockPool::binOf(15), 15);
        QCOMPARE(BlockPool::binOf(16), 16);
        QCOMPARE(BlockPool::binOf(31), 31);
        QCOMPARE(BlockPool::binOf(32), 32);
        QCOMPARE(BlockPool::binOf(34), 33);
        QCOMPARE(BlockPool::binOf(uint64_t(1) << 20), (20 - 3) * 16);
        QCOMPARE(BlockPool::binOf((uint64_t(1) << 20) + (uint64_t(1) << 16)), (20 - 3) * 16 + 1);
        QVERIFY(BlockPool::binOf(~uint64_t(0)) < BlockPool::kBins);
        int last = 0;
        for (uint64_t s = 1; s < (uint64_t(1) << 62); s += s / 7 + 1) {
            const int b = BlockPool::binOf(s);
            QVERIFY2(b >= last, qPrintable(QString::number(s)));
            last = b;
        }
    }

    // Best fit: the smallest size of at least the request on its stream, its lowest address
    // first; another stream's blocks never answer.
    void bestFitByHand()
    {
        BlockPool p;
        p.insert({0, 4096, 3000, 1});
        p.insert({0, 4096, 1000, 2});
        p.insert({0, 8192, 500, 3});
        p.insert({1, 1024, 100, 4});
        p.insert({0, 4096, 1000, 2}); // there already
        QCOMPARE(p.size(), size_t(4));
        QCOMPARE(p.first(0, 100)->block, 2);
        QCOMPARE(p.first(0, 4096)->block, 2);
        QCOMPARE(p.first(0, 4097)->block, 3);
        QVERIFY(!p.first(0, 8193));
        QCOMPARE(p.first(1, 1)->block, 4);
        QVERIFY(!p.first(1, 1025));
        QVERIFY(!p.first(2, 1));
        p.erase(2);
        QCOMPARE(p.first(0, 4096)->block, 1);
        p.erase(2); // not there
        p.erase(1);
        QCOMPARE(p.first(0, 1)->block, 3);
        const std::vector<FreeBlock> all = p.blocks();
        QCOMPARE(all.size(), size_t(2));
        QCOMPARE(all[0].block, 3);
        QCOMPARE(all[1].block, 4);
    }

    // A size whose blocks are all taken keeps its class in its bin: the answer passes over it
    // to a larger size of the same bin, or to the next bin once no size of the bin has blocks,
    // and finds it again when a block of that size comes back.
    void emptiedSizesAreSkipped()
    {
        BlockPool p;
        QCOMPARE(BlockPool::binOf(4096), BlockPool::binOf(4100));
        QVERIFY(BlockPool::binOf(8192) > BlockPool::binOf(4100));
        p.insert({0, 4096, 100, 1});
        p.insert({0, 4100, 200, 2});
        p.insert({0, 8192, 300, 3});
        p.erase(1);
        QCOMPARE(p.first(0, 1)->block, 2);
        QCOMPARE(p.first(0, 4096)->block, 2);
        p.erase(2);
        QCOMPARE(p.first(0, 1)->block, 3);
        QCOMPARE(p.first(0, 4097)->block, 3);
        p.erase(3);
        QVERIFY(!p.first(0, 1));
        QCOMPARE(p.size(), size_t(0));
        QVERIFY(p.blocks().empty());
        p.insert({0, 4100, 400, 4});
        QCOMPARE(p.first(0, 1)->block, 4);
        p.insert({0, 4096, 500, 5});
        QCOMPARE(p.first(0, 1)->block, 5);
        QCOMPARE(p.first(0, 4097)->block, 4);
        const std::vector<FreeBlock> all = p.blocks();
        QCOMPARE(all.size(), size_t(2));
        QCOMPARE(all[0].block, 5);
        QCOMPARE(all[1].block, 4);
    }

    // 400,000 random inserts, erases and look-ups against the std::set, with block ids reused
    // as the allocator reuses them.
    void agreesWithOrderedSet()
    {
        std::mt19937_64 rng(20261205);
        BlockPool pool;
        std::set<FreeBlock, Ref> ref;
        std::vector<FreeBlock> byId(4096, FreeBlock{});
        std::vector<int> freeIds, used;
        for (int i = 4095; i >= 0; --i)
            freeIds.push_back(i);
        uint64_t nextAddr = 1;
        // A replay's sizes: a few common ones (activations), many one-off remainders, small-pool
        // sizes, and sizes on bin edges.
        const uint64_t common[] = {512, 1024, 2u << 20, 20u << 20, 64u << 20, (64u << 20) + 512, 96u << 20};
        auto drawSize = [&]() -> uint64_t {
            switch (rng() % 5) {
            case 0:
            case 1:
                return common[rng() % std::size(common)];
            case 2:
                return (rng() % 4096 + 1) * 512;
            case 3:
                return uint64_t(1) << (rng() % 40 + 4);
            default:
                return (rng() % (uint64_t(1) << 34)) + 1;
            }
        };
        int firsts = 0, hits = 0;
        for (int step = 0; step < 400000; ++step) {
            const unsigned op = unsigned(rng() % 10);
            if (op < 4 && !freeIds.empty()) {
                const int id = freeIds.back();
                freeIds.pop_back();
                const FreeBlock b{int(rng() % 3), drawSize(), nextAddr, id};
                nextAddr += 1 + rng() % 1000;
                pool.insert(b);
                ref.insert(b);
                byId[size_t(id)] = b;
                used.push_back(id);
            } else if (op < 7 && !used.empty()) {
                const size_t k = rng() % used.size();
                const int id = used[k];
                used[k] = used.back();
                used.pop_back();
                pool.erase(id);
                ref.erase(byId[size_t(id)]);
                freeIds.push_back(id);
            } else {
                const int stream = int(rng() % 3);
                const uint64_t size = rng() % 2 ? drawSize() : drawSize() - 1;
                const std::optional<FreeBlock> got = pool.first(stream, size);
                const std::optional<FreeBlock> want = refFirst(ref, stream, size);
                ++firsts;
                hits += want ? 1 : 0;
                QVERIFY2(same(got, want), qPrintable(QStringLiteral("step %1").arg(step)));
                // What malloc does with it: the block leaves the pool.
                if (got && rng() % 2) {
                    pool.erase(got->block);
                    ref.erase(*got);
                    used.erase(std::find(used.begin(), used.end(), got->block));
                    freeIds.push_back(got->block);
                }
            }
            QCOMPARE(pool.size(), ref.size());
        }
        QVERIFY(hits > firsts / 4 && hits < firsts);
        const std::vector<FreeBlock> all = pool.blocks();
        QCOMPARE(all.size(), ref.size());
        size_t i = 0;
        for (const FreeBlock &b : ref)
            QVERIFY(same(all[i++], b));
    }
};

QTEST_GUILESS_MAIN(TestBlockPool)
#include "tst_blockpool.moc"
