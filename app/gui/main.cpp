#include "core/catalog.h"
#include "widgets/mainwindow.h"

#include <QApplication>
#include <QDir>

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("ShardScope"));
    QApplication::setOrganizationName(QStringLiteral("ShardScope"));
    shardscope::MainWindow window;
    const QStringList args = QApplication::arguments();
    const QString plan = args.size() > 1
                             ? args.at(1)
                             : QString::fromStdString(shardscope::locateDataDir()) +
                                   QStringLiteral("/cases/hcie-ai-ddp.plan.json");
    window.openPlan(plan);
    window.show();
    return QApplication::exec();
}
