#include "moe.h"

#include "plan.h"

namespace shardscope {

MoeRouting moeRouting(const ModelShape &m, const Parallel &pa)
{
    MoeRouting r;
    if (!m.moe.enabled())
        return r;
    const MoeShape &e = m.moe;
    const int etp = pa.expertTp();
    r.tokensIn = pa.sp ? 1.0 / pa.tp : 1.0;
    r.load = e.capacity_factor > 0 ? e.capacity_factor : e.imbalance;
    // Without sequence parallelism every TP rank already holds all tokens (etp == tp then).
    const double gathered = pa.sp ? double(etp) : 1.0;
    r.copies = r.tokensIn * gathered * e.top_k * r.load;
    r.localExperts = double(e.experts) / pa.ep;
    r.expertWidth = double(e.expert_ffn_hidden) / etp;
    r.sharedWidth = double(e.shared_experts) * double(e.shared_expert_ffn_hidden) / pa.tp;
    r.dispatchCopies = e.dispatcher == MoeShape::Dispatcher::AllGather
                           ? r.tokensIn * double(pa.ep) * etp
                           : r.tokensIn * e.top_k * r.load;
    return r;
}

double dispatchTransientHiddens(const ModelShape &m, const Parallel &pa)
{
    if (!m.moe.enabled())
        return 0;
    const MoeRouting r = moeRouting(m, pa);
    if (m.moe.dispatcher == MoeShape::Dispatcher::AllGather)
        return r.dispatchCopies; // every token of the ep x etp group, gathered
    // All-to-all: the permuted send buffer and the receive buffer; with ep = 1 the permuted
    // copy is the experts' input itself.
    return pa.ep > 1 ? 2.0 * r.dispatchCopies : 0.0;
}

} // namespace shardscope
