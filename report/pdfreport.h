#pragma once

#include "core/plan.h"

#include <QByteArray>
#include <QDateTime>
#include <QPageSize>
#include <QString>
#include <vector>

class QIODevice;

namespace shardscope {

class Catalog;

/// One plan of a report and where it came from (shown under its title; may be empty).
struct ReportPlan
{
    Plan plan;
    QString source;
    QString title; ///< its page title and column head; empty: the plan's name
};

/// How a report is laid out. The language is the application's: whatever translator is
/// installed when the report is rendered.
struct ReportOptions
{
    QPageSize::PageSizeId pageSize = QPageSize::A4; ///< A4 or Letter
    QDateTime generated;                            ///< shown in the footer; invalid: now
    QString title;                                  ///< empty: "ShardScope plan report"
};

/// Renders the plan report as a PDF into `device` (open for writing): a comparison page when
/// there are several plans, then for every plan its verdict, summary, per-rank stacked bars
/// with the capacity and usable lines, the components with their formulas and assumptions,
/// collectives and step time, and the device profile with its sources. Every number comes
/// from the engine (shardscope::estimate, shardscope::explainMemory). Needs a
/// QGuiApplication (the offscreen platform is enough). Throws PlanError for a plan whose
/// device or framework profile is not in `catalog`.
void renderPdfReport(QIODevice *device, const std::vector<ReportPlan> &plans,
                     const Catalog &catalog, const ReportOptions &options = {});

/// The report as bytes (benchmarks, previews).
QByteArray pdfReportBytes(const std::vector<ReportPlan> &plans, const Catalog &catalog,
                          const ReportOptions &options = {});

/// Renders the report and writes it to `fileName` through QSaveFile (all or nothing). The
/// function File > Export PDF and `shardscope-cli report` call. Returns false and sets
/// `*error` (translated) when the file cannot be written or a plan cannot be evaluated.
bool writePdfReport(const QString &fileName, const std::vector<ReportPlan> &plans,
                    const Catalog &catalog, const ReportOptions &options = {},
                    QString *error = nullptr);

} // namespace shardscope
