#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace shardscope {

/// One row of a collective benchmark (nccl-tests or hccl_test): message size S and the times
/// and bandwidths at it.
struct CollectivePoint
{
    std::string collective; ///< all_reduce, all_gather, reduce_scatter, all_to_all, ...
    int ranks = 0;          ///< 0 when the file does not say
    double bytes = 0;       ///< S (nccl-tests: whole buffer)
    double time_s = 0;      ///< out-of-place time of one call
    double algbw = 0;       ///< bytes/s
    double busbw = 0;       ///< bytes/s (hccl_test: derived from algbw with the nccl-tests factor)
};

struct CollectiveImport
{
    std::string tool; ///< "nccl-tests" or "hccl_test"
    std::vector<CollectivePoint> points;
    double avg_busbw = 0; ///< the tool's own "Avg bus bandwidth" when printed (bytes/s)
};

/// Reads the text output of an nccl-tests binary (all_reduce_perf, ...). `collective` names
/// the operation when the text does not ("" : guessed from `hint`, e.g. the file name).
/// Throws std::runtime_error when no result row is found.
CollectiveImport parseNcclTests(const std::string &text, const std::string &hint = {});

/// Reads hccl_test output (data_size | aveg_time | alg_bandwidth | check_result). hccl_test
/// prints only algbw; busbw uses the nccl-tests factor for `ranks` (0: left 0).
CollectiveImport parseHcclTest(const std::string &text, const std::string &hint, int ranks);

/// Picks nccl-tests or hccl_test by the text's header.
CollectiveImport parseCollectiveBenchmark(const std::string &text, const std::string &hint,
                                          int ranks = 0);

/// Collective time in a PyTorch / torch_npu profiler trace.
struct TraceCollective
{
    std::string collective;
    int calls = 0;
    double total_s = 0;
    double max_s = 0;
    double bytes = 0; ///< message size when the trace records it (record_param_comms), else 0
};

struct TraceMemoryPoint
{
    double t_s = 0;       ///< from the trace's first event
    double allocated = 0; ///< bytes
    double reserved = 0;
};

struct TraceImport
{
    std::vector<TraceCollective> collectives; ///< by collective, most time first
    std::vector<TraceMemoryPoint> memory;     ///< the allocator's timeline ([memory] events)
    double peak_allocated = 0;
    double peak_reserved = 0;
    double span_s = 0; ///< first to last event
    int events = 0;
};

/// Whether `text` is to be read as a Chrome trace (a JSON object with "traceEvents", or a
/// JSON array) rather than as collective benchmark output.
bool looksLikeChromeTrace(const std::string &text);

/// Reads a Chrome trace JSON exported by torch.profiler (export_chrome_trace) or torch_npu's
/// profiler: device kernels and CPU ops of NCCL / HCCL collectives, and "[memory]" events.
/// Throws std::runtime_error when the file is not a trace.
TraceImport parseChromeTrace(const std::string &text);

/// "all_reduce" from "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "hcom_allReduce_", "c10d::
/// allgather_", ... ; "" when the name is not a collective.
std::string collectiveFromName(const std::string &name);

nlohmann::json collectiveImportToJson(const CollectiveImport &c);
nlohmann::json traceImportToJson(const TraceImport &t);

} // namespace shardscope
