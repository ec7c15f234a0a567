// The native CPU backend's kernels: OpenBLAS GEMMs, a causal attention built from GEMMs, and
// memory-bound loops. Used where no accelerator is attached and by the tests.
#include "cpukernels.h"
#include "openblas.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>

namespace shardscope::cpukernels {

namespace {

using Clock = std::chrono::steady_clock;

void sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
           int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
    std::string error;
    const openblas::Library *blas = openblas::library(&error);
    if (!blas)
        throw std::runtime_error(error);
    blas->sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void fillRandom(std::vector<float> &v, uint32_t seed)
{
    uint32_t s = seed * 2654435761u + 12345u;
    for (float &x : v) {
        s = s * 1664525u + 1013904223u;
        x = float(int32_t(s >> 8) % 2001 - 1000) / 1000.0f; // [-1, 1]
    }
}

double medianOf(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Number of operand sets to rotate so that consecutive calls do not hit a warm cache.
int rotations(double setBytes)
{
    const double target = 64.0 * 1024 * 1024;
    if (setBytes >= target)
        return 1;
    return std::clamp(int(std::ceil(target / std::max(1.0, setBytes))), 1, 8);
}

constexpr double kMaxBytes = 8.0 * 1024 * 1024 * 1024;

/// Times `call(set)` `repeats` times after `warmup` calls; fills the time fields.
template <typename F> bool timeIt(KernelMeasurement &m, const Timing &t, int sets, F &&call)
{
    int next = 0;
    for (int i = 0; i < t.warmup; ++i) {
        call(next);
        next = (next + 1) % sets;
    }
    std::vector<double> times;
    const int reps = std::max(1, t.repeats);
    for (int i = 0; i < reps; ++i) {
        if (t.cancel && t.cancel->load()) {
            m.status = "skipped";
            m.message = "cancelled";
            return false;
        }
        const auto t0 = Clock::now();
        call(next);
        const auto t1 = Clock::now();
        times.push_back(std::chrono::duration<double>(t1 - t0).count());
        next = (next + 1) % sets;
    }
    m.repeats = reps;
    m.time_s = medianOf(times);
    m.min_s = *std::min_element(times.begin(), times.end());
    m.max_s = *std::max_element(times.begin(), times.end());
    return true;
}

int64_t kvHeadOf(const Kernel &k, int64_t h)
{
    const int64_t kvh = std::max<int64_t>(1, k.kv_heads);
    const int64_t group = std::max<int64_t>(1, k.heads / kvh);
    return std::min(kvh - 1, h / group);
}

} // namespace

void gemm(const std::string &layout, int64_t m, int64_t n, int64_t k, const float *a,
          const float *b, float *c)
{
    const bool ta = layout.size() == 2 && layout[0] == 't';
    const bool tb = layout.size() == 2 && layout[1] == 't';
    sgemm(ta, tb, m, n, k, 1.0f, a, ta ? m : k, b, tb ? k : n, 0.0f, c, n);
}

void roundToBf16(std::vector<float> &v)
{
    for (float &x : v) {
        uint32_t u;
        std::memcpy(&u, &x, 4);
        if ((u & 0x7f800000u) == 0x7f800000u)
            continue; // inf / nan unchanged
        u += 0x7fffu + ((u >> 16) & 1u);
        u &= 0xffff0000u;
        std::memcpy(&x, &u, 4);
    }
}

void attentionForward(const Kernel &k, const float *q, const float *kk, const float *v, float *o,
                      float *lse)
{
    const int64_t sq = k.seq_q, skv = k.seq_kv, d = k.head_dim;
    const int64_t kvh = std::max<int64_t>(1, k.kv_heads);
    const float scale = 1.0f / std::sqrt(float(d));
    const int64_t offset = skv - sq; // query i sees keys j <= i + offset
    std::vector<float> s(size_t(sq * skv));
    for (int64_t b = 0; b < k.batch; ++b) {
        for (int64_t h = 0; h < k.heads; ++h) {
            const int64_t g = kvHeadOf(k, h);
            const float *Q = q + ((b * k.heads + h) * sq) * d;
            const float *K = kk + ((b * kvh + g) * skv) * d;
            const float *V = v + ((b * kvh + g) * skv) * d;
            float *O = o + ((b * k.heads + h) * sq) * d;
            sgemm(false, true, sq, skv, d, scale, Q, d, K, d, 0.0f, s.data(), skv);
            for (int64_t i = 0; i < sq; ++i) {
                float *row = s.data() + i * skv;
                const int64_t last = k.causal ? std::min(skv - 1, i + offset) : skv - 1;
                float mx = -std::numeric_limits<float>::infinity();
                for (int64_t j = 0; j <= last; ++j)
                    mx = std::max(mx, row[j]);
                double sum = 0;
                for (int64_t j = 0; j <= last; ++j) {
                    row[j] = std::exp(row[j] - mx);
                    sum += row[j];
                }
                const float inv = sum > 0 ? float(1.0 / sum) : 0.0f;
                for (int64_t j = 0; j <= last; ++j)
                    row[j] *= inv;
                for (int64_t j = last + 1; j < skv; ++j)
                    row[j] = 0.0f;
                if (lse)
                    lse[(b * k.heads + h) * sq + i] = mx + float(std::log(std::max(sum, 1e-30)));
            }
            sgemm(false, false, sq, d, skv, 1.0f, s.data(), skv, V, d, 0.0f, O, d);
        }
    }
}

void attentionBackward(const Kernel &k, const float *q, const float *kk, const float *v,
                       const float *o, const float *dO, const float *lse, float *dq, float *dk,
                       float *dv)
{
    const int64_t sq = k.seq_q, skv = k.seq_kv, d = k.head_dim;
    const int64_t kvh = std::max<int64_t>(1, k.kv_heads);
    const float scale = 1.0f / std::sqrt(float(d));
    const int64_t offset = skv - sq;
    std::vector<float> p(size_t(sq * skv)), dp(size_t(sq * skv));
    std::fill(dk, dk + k.batch * kvh * skv * d, 0.0f);
    std::fill(dv, dv + k.batch * kvh * skv * d, 0.0f);
    for (int64_t b = 0; b < k.batch; ++b) {
        for (int64_t h = 0; h < k.heads; ++h) {
            const int64_t g = kvHeadOf(k, h);
            const int64_t qo = ((b * k.heads + h) * sq) * d;
            const int64_t ko = ((b * kvh + g) * skv) * d;
            // P recomputed from the saved log-sum-exp.
            sgemm(false, true, sq, skv, d, scale, q + qo, d, kk + ko, d, 0.0f, p.data(), skv);
            for (int64_t i = 0; i < sq; ++i) {
                float *row = p.data() + i * skv;
                const int64_t last = k.causal ? std::min(skv - 1, i + offset) : skv - 1;
                const float l = lse[(b * k.heads + h) * sq + i];
                for (int64_t j = 0; j <= last; ++j)
                    row[j] = std::exp(row[j] - l);
                for (int64_t j = last + 1; j < skv; ++j)
                    row[j] = 0.0f;
            }
            // dV += P^T dO; dP = dO V^T.
            sgemm(true, false, skv, d, sq, 1.0f, p.data(), skv, dO + qo, d, 1.0f, dv + ko, d);
            sgemm(false, true, sq, skv, d, 1.0f, dO + qo, d, v + ko, d, 0.0f, dp.data(), skv);
            // dS = P * (dP - rowsum(dO * O)).
            for (int64_t i = 0; i < sq; ++i) {
                double D = 0;
                for (int64_t x = 0; x < d; ++x)
                    D += double(dO[qo + i * d + x]) * double(o[qo + i * d + x]);
                float *row = dp.data() + i * skv;
                const float *prow = p.data() + i * skv;
                for (int64_t j = 0; j < skv; ++j)
                    row[j] = prow[j] * (row[j] - float(D));
            }
            // dQ = dS K * scale; dK += dS^T Q * scale.
            sgemm(false, false, sq, d, skv, scale, dp.data(), skv, kk + ko, d, 0.0f, dq + qo, d);
            sgemm(true, false, skv, d, sq, scale, dp.data(), skv, q + qo, d, 1.0f, dk + ko, d);
        }
    }
}

KernelMeasurement measure(const Kernel &k, const Timing &t)
{
    KernelMeasurement m;
    m.name = k.name;
    try {
        switch (k.kind) {
        case KernelKind::Gemm: {
            const double setBytes = 4.0 * double(k.m * k.k + k.k * k.n + k.m * k.n);
            if (setBytes > kMaxBytes || k.m <= 0 || k.n <= 0 || k.k <= 0) {
                m.status = "error";
                m.message =
                    "GEMM operands too large or empty for the CPU backend (use a token cap)";
                return m;
            }
            const int sets = rotations(setBytes);
            const size_t ns = static_cast<size_t>(sets);
            std::vector<std::vector<float>> a(ns), b(ns), c(ns);
            for (int s = 0; s < sets; ++s) {
                a[size_t(s)].resize(size_t(k.m * k.k));
                b[size_t(s)].resize(size_t(k.k * k.n));
                c[size_t(s)].resize(size_t(k.m * k.n));
                fillRandom(a[size_t(s)], uint32_t(2 * s + 1));
                fillRandom(b[size_t(s)], uint32_t(2 * s + 2));
                if (k.dtype == DType::BF16) {
                    roundToBf16(a[size_t(s)]);
                    roundToBf16(b[size_t(s)]);
                }
            }
            if (!timeIt(m, t, sets, [&](int s) {
                    gemm(k.layout, k.m, k.n, k.k, a[size_t(s)].data(), b[size_t(s)].data(),
                         c[size_t(s)].data());
                }))
                return m;
            m.flops_per_s = m.time_s > 0 ? k.flops / m.time_s : 0;
            m.message = k.dtype == DType::FP32
                            ? "OpenBLAS sgemm"
                            : std::string("OpenBLAS sgemm on inputs rounded to ") +
                                  (k.dtype == DType::BF16 ? "bf16" : "fp32 (no fp16 rounding)") +
                                  " (fp32 arithmetic)";
            return m;
        }
        case KernelKind::Attention: {
            const int64_t kvh = std::max<int64_t>(1, k.kv_heads);
            const size_t qn = size_t(k.batch * k.heads * k.seq_q * k.head_dim);
            const size_t kn = size_t(k.batch * kvh * k.seq_kv * k.head_dim);
            const size_t ln = size_t(k.batch * k.heads * k.seq_q);
            const double setBytes =
                4.0 * double(3 * qn + 4 * kn + ln) + 8.0 * double(k.seq_q * k.seq_kv);
            if (setBytes > kMaxBytes || qn == 0) {
                m.status = "error";
                m.message = "attention too large or empty for the CPU backend (use a token cap)";
                return m;
            }
            const bool bwd = k.op == "attention_bwd";
            std::vector<float> q(qn), kk(kn), v(kn), o(qn), lse(ln), dO, dq, dk, dv;
            fillRandom(q, 11);
            fillRandom(kk, 12);
            fillRandom(v, 13);
            attentionForward(k, q.data(), kk.data(), v.data(), o.data(), lse.data());
            if (bwd) {
                dO.resize(qn);
                dq.resize(qn);
                dk.resize(kn);
                dv.resize(kn);
                fillRandom(dO, 14);
            }
            if (!timeIt(m, t, 1, [&](int) {
                    if (bwd)
                        attentionBackward(k, q.data(), kk.data(), v.data(), o.data(), dO.data(),
                                          lse.data(), dq.data(), dk.data(), dv.data());
                    else
                        attentionForward(k, q.data(), kk.data(), v.data(), o.data(), lse.data());
                }))
                return m;
            m.flops_per_s = m.time_s > 0 ? k.flops / m.time_s : 0;
            m.message = "fp32, GEMM-based (scores materialized per head)";
            if (k.v_head_dim > 0 && k.v_head_dim != k.head_dim)
                m.message += "; v run at the q/k width " + std::to_string(k.head_dim) + " (not " +
                             std::to_string(k.v_head_dim) + ")";
            return m;
        }
        case KernelKind::Elementwise: {
            const int64_t n = k.elements;
            const int64_t width = k.width > 0 ? std::min(k.width, n) : n;
            if (n <= 0 || 16.0 * double(n) > kMaxBytes) {
                m.status = "error";
                m.message = "elementwise op too large or empty for the CPU backend";
                return m;
            }
            const int sets = rotations(12.0 * double(n));
            const size_t ns = static_cast<size_t>(sets);
            std::vector<std::vector<float>> x(ns), y(ns), z(ns);
            for (int s = 0; s < sets; ++s) {
                x[size_t(s)].resize(size_t(n));
                y[size_t(s)].resize(size_t(n));
                z[size_t(s)].resize(size_t(n));
                fillRandom(x[size_t(s)], uint32_t(s + 21));
                fillRandom(y[size_t(s)], uint32_t(s + 31));
            }
            std::vector<float> w(size_t(width), 1.0f);
            auto call = [&](int s) {
                const float *a = x[size_t(s)].data();
                const float *b = y[size_t(s)].data();
                float *c = z[size_t(s)].data();
                if (k.op == "rmsnorm") {
                    for (int64_t r = 0; r + width <= n; r += width) {
                        double ss = 0;
                        for (int64_t i = 0; i < width; ++i)
                            ss += double(a[r + i]) * a[r + i];
                        const float inv = float(1.0 / std::sqrt(ss / double(width) + 1e-6));
                        for (int64_t i = 0; i < width; ++i)
                            c[r + i] = a[r + i] * inv * w[size_t(i)];
                    }
                } else if (k.op == "swiglu") {
                    for (int64_t i = 0; i < n; ++i)
                        c[i] = a[i] / (1.0f + std::exp(-a[i])) * b[i];
                } else if (k.op == "add") {
                    for (int64_t i = 0; i < n; ++i)
                        c[i] = a[i] + b[i];
                } else {
                    std::memcpy(c, a, size_t(n) * sizeof(float));
                }
            };
            if (k.op != "rmsnorm" && k.op != "swiglu" && k.op != "add" && k.op != "copy") {
                m.status = "skipped";
                m.message = "op " + k.op + " is not implemented by the CPU backend";
                return m;
            }
            if (!timeIt(m, t, sets, call))
                return m;
            m.bytes_per_s = m.time_s > 0 ? k.bytes / m.time_s : 0;
            m.message = "fp32 loop; rate counts the kernel's nominal bytes";
            return m;
        }
        case KernelKind::Collective:
            m.status = "skipped";
            m.message = "the cpu backend runs one process; collectives need the torch backend "
                        "(gloo, NCCL or HCCL) with --nproc >= 2";
            return m;
        }
    } catch (const std::bad_alloc &) {
        m.status = "error";
        m.message = "out of host memory";
        return m;
    } catch (const std::exception &e) {
        m.status = "error";
        m.message = e.what();
        return m;
    }
    m.status = "error";
    m.message = "unknown kernel kind";
    return m;
}

} // namespace shardscope::cpukernels
