#include "mainwindow.h"

#include "core/catalog.h"
#include "core/errors.h"
#include "core/estimate.h"
#include "core/units.h"

#include <QFile>
#include <QLabel>
#include <QMessageBox>

namespace shardscope {

MainWindow::MainWindow(QWidget *parent) : QMainWindow(parent)
{
    setWindowTitle(tr("ShardScope"));
    resize(1200, 800);
}

MainWindow::~MainWindow() = default;

bool MainWindow::openPlan(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        QMessageBox::warning(this, tr("Open plan"), tr("Cannot read %1").arg(path));
        return false;
    }
    try {
        const Catalog &cat = Catalog::builtin();
        const Plan plan = parsePlanText(f.readAll().toStdString(), cat);
        const Estimate e = estimate(plan, cat);
        auto *label = new QLabel(this);
        label->setText(tr("%1\npeak %2 per rank: %3")
                           .arg(QString::fromStdString(plan.name),
                                QString::fromStdString(formatGiB(e.memory.peak_bytes)),
                                e.memory.fits ? tr("fits") : tr("does not fit")));
        setCentralWidget(label);
        setWindowTitle(tr("%1 - ShardScope").arg(QString::fromStdString(plan.name)));
        return true;
    } catch (const PlanError &e) {
        QMessageBox::warning(this, tr("Open plan"), QString::fromStdString(e.what()));
        return false;
    }
}

} // namespace shardscope
