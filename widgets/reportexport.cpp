#include "reportexport.h"

#include "comparepanel.h"
#include "comparisonmodel.h"
#include "mainwindow.h"
#include "plandescription.h"
#include "plandocument.h"
#include "qstrings.h"
#include "report/pdfreport.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLocale>
#include <QMessageBox>
#include <QStatusBar>

namespace shardscope {

QPageSize::PageSizeId ReportExport::defaultPageSize()
{
    return QLocale().measurementSystem() == QLocale::ImperialUSSystem ? QPageSize::Letter
                                                                      : QPageSize::A4;
}

bool ReportExport::exportTo(MainWindow &window, const QString &path, QPageSize::PageSizeId pageSize,
                            QString *error)
{
    const PlanDocument *doc = window.document();
    // Titled by what each plan is; where it came from and the user's name for it beneath.
    auto source = [](QString where, const Plan &plan, bool edited) {
        if (edited)
            where = tr("%1, edited").arg(where);
        return plan.name.empty() ? where
                                 : tr("%1; named “%2”").arg(where, qs(plan.name));
    };
    const QString from = doc->isEdited() ? QFileInfo(doc->originPath()).fileName() : doc->displayName();
    std::vector<ReportPlan> plans{{doc->plan(), source(from, doc->plan(), doc->isEdited()),
                                   describePlan(doc->plan(), doc->catalog())}};
    const std::string current = planToJson(doc->plan()).dump();
    if (window.comparePanel()) {
        for (const PinnedPlan &p : window.comparePanel()->model()->plans()) {
            if (planToJson(p.plan).dump() != current)
                plans.push_back({p.plan, source(tr("pinned for comparison"), p.plan, p.edited),
                                 p.description});
        }
    }
    ReportOptions options;
    options.pageSize = pageSize;
    return writePdfReport(path, plans, doc->catalog(), options, error);
}

void ReportExport::install(MainWindow &window)
{
    MainWindow *w = &window;
    window.addExportAction(tr("PDF report..."), [w] {
        QString suggested = w->document()->filePath();
        suggested =
            suggested.isEmpty()
                ? tr("plan-report.pdf")
                : QFileInfo(suggested).path() + QLatin1Char('/') +
                      QFileInfo(suggested).completeBaseName().remove(QStringLiteral(".plan")) +
                      QStringLiteral(".pdf");
        const QString path = QFileDialog::getSaveFileName(w, tr("Export PDF report"), suggested,
                                                          tr("PDF documents (*.pdf)"));
        if (path.isEmpty())
            return;
        QString error;
        if (!exportTo(*w, path, defaultPageSize(), &error)) {
            QMessageBox::warning(w, tr("Export PDF report"), error);
            return;
        }
        w->statusBar()->showMessage(tr("Wrote %1").arg(QDir::toNativeSeparators(path)), 5000);
    });
}

} // namespace shardscope
