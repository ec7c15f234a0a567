#include "core/catalog.h"
#include "core/errors.h"
#include "shardscope_config.h"
#include "widgets/darkpalette.h"
#include "widgets/mainwindow.h"
#include "widgets/languagemenu.h"
#include "widgets/settingsstore.h"
#include "widgets/workbench.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QMessageBox>
#include <QStyleFactory>
#include <QTimer>

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("ShardScope"));
    QApplication::setOrganizationName(QStringLiteral("ShardScope"));
    // The reverse-DNS id of the .desktop file and the AppStream metainfo (packaging/).
    QGuiApplication::setDesktopFileName(QStringLiteral("io.github.shardscope.ShardScope"));
    QApplication::setApplicationVersion(QStringLiteral(SHARDSCOPE_VERSION));
    // Settings through a store whose failed writes keep the previous file (settingsstore.h).
    shardscope::useSettingsStore();
    // The system locale's language, or the one chosen in the Language menu.
    shardscope::LanguageMenu::applySaved();

    QCommandLineParser parser;
    parser.setApplicationDescription(QApplication::translate("main", "Transformer training planner"));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("plan"),
                                 QApplication::translate("main", "Plan file to open (.plan.json)"));
    const QCommandLineOption screenshot(
        QStringLiteral("screenshot"),
        QApplication::translate("main", "Save a PNG of the window to <file> and quit."),
        QStringLiteral("file"));
    const QCommandLineOption dark(QStringLiteral("dark"),
                                  QApplication::translate("main", "Use a dark palette."));
    const QCommandLineOption size(QStringLiteral("size"),
                                  QApplication::translate("main", "Window size, e.g. 1366x768."),
                                  QStringLiteral("WxH"));
    const QCommandLineOption tab(
        QStringLiteral("tab"),
        QApplication::translate("main", "Bring a centre tab or panel to the front by its title, "
                                        "e.g. \"Memory over the step\"."),
        QStringLiteral("name"));
    parser.addOptions({screenshot, dark, size, tab});
    parser.process(app);

    if (parser.isSet(dark)) {
        QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
        QApplication::setPalette(shardscope::darkPalette());
    }

    try {
        shardscope::Catalog::builtin();
    } catch (const shardscope::PlanError &e) {
        QMessageBox::critical(nullptr, QStringLiteral("ShardScope"), QString::fromUtf8(e.what()));
        return 1;
    }

    // The window with File > Export > PDF report, the teaching panel and the Language menu; a
    // language chosen there rebuilds it (the reference below serves the start-up only).
    shardscope::Workbench workbench;
    shardscope::MainWindow &window = *workbench.window();
    if (parser.isSet(size)) {
        const QStringList wh = parser.value(size).split(QLatin1Char('x'));
        if (wh.size() == 2)
            window.resize(wh.at(0).toInt(), wh.at(1).toInt());
    }
    // Without a file the window starts on the HCIE-AI case.
    if (!parser.positionalArguments().isEmpty())
        window.openPlan(parser.positionalArguments().constFirst());
    window.show();
    if (parser.isSet(tab) && !window.showTab(parser.value(tab)))
        qWarning("--tab: no tab or panel is called \"%s\"", qPrintable(parser.value(tab)));

    if (parser.isSet(screenshot)) {
        const QString path = parser.value(screenshot);
        QTimer::singleShot(500, &window, [&window, path] {
            const bool ok = window.saveScreenshot(path);
            window.autosave()->finish();
            QApplication::exit(ok ? 0 : 1);
        });
        return QApplication::exec();
    }
    QTimer::singleShot(0, &window, [&window] { window.offerRecovery(); });
    return QApplication::exec();
}
