#pragma once

#include <QCoreApplication>
#include <QPageSize>
#include <QString>

namespace shardscope {

class MainWindow;

/// File > Export > PDF report: the open plan, followed by the plans pinned for comparison,
/// rendered by shardscope::writePdfReport (the same path as `shardscope-cli report`).
class ReportExport
{
    Q_DECLARE_TR_FUNCTIONS(ReportExport)

public:
    /// Adds the action to the window's Export menu.
    static void install(MainWindow &window);
    /// Writes the report without asking; false with `*error` set when it cannot.
    static bool exportTo(MainWindow &window, const QString &path, QPageSize::PageSizeId pageSize,
                         QString *error);
    /// Letter where the locale measures in US units, A4 elsewhere.
    static QPageSize::PageSizeId defaultPageSize();
};

} // namespace shardscope
