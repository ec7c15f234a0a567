// `shardscope-cli report`: the PDF plan report, rendered headless by the same code as the GUI's
// File > Export PDF.
#include "cli.h"
#include "core/catalog.h"
#include "core/errors.h"
#include "core/files.h"
#include "i18n/language.h"
#include "report/pdfreport.h"

#include <QFileInfo>
#include <QGuiApplication>
#include <memory>
#include <ostream>

namespace shardscope::cli {

namespace {

const char *kReportUsage = QT_TRANSLATE_NOOP(
    "shardscope-cli",
    "Usage: shardscope-cli report PLAN.plan.json [PLAN.plan.json...] -o REPORT.pdf\n"
    "                             [--page a4|letter] [--lang en|zh_CN]\n"
    "\n"
    "Writes a PDF report: the verdict, the plan, per-rank memory bars against the HBM capacity,\n"
    "every component with its formula and assumptions, collectives and step time, the device\n"
    "profile with its sources, and a comparison page when several plans are given. The report's\n"
    "language is --lang, else the system's.\n");

/// QPdfWriter needs a QGuiApplication; the offscreen platform needs no display.
std::unique_ptr<QGuiApplication> ensureGuiApplication()
{
    if (QCoreApplication::instance())
        return nullptr;
    static int argc = 3;
    static char name[] = "shardscope-cli";
    static char platformFlag[] = "-platform";
    static char platform[] = "offscreen";
    static char *argv[] = {name, platformFlag, platform, nullptr};
    return std::make_unique<QGuiApplication>(argc, argv);
}

} // namespace

void useInProcessReport()
{
    detail::registerVerb("report", reportCommand);
}

int reportCommand(const std::vector<std::string> &args, std::ostream &out, std::ostream &err)
{
    std::vector<std::string> files;
    std::string output;
    std::string page = "a4";
    std::string lang;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string &a = args[i];
        auto value = [&](const char *option) -> const std::string * {
            if (i + 1 >= args.size()) {
                err << "shardscope-cli report: " << option << " needs a value\n";
                return nullptr;
            }
            return &args[++i];
        };
        if (a == "-o" || a == "--output") {
            const std::string *v = value("-o");
            if (!v)
                return ExitBadInput;
            output = *v;
        } else if (a.rfind("--output=", 0) == 0) {
            output = a.substr(9);
        } else if (a == "--page") {
            const std::string *v = value("--page");
            if (!v)
                return ExitBadInput;
            page = *v;
        } else if (a.rfind("--page=", 0) == 0) {
            page = a.substr(7);
        } else if (a == "--lang") {
            const std::string *v = value("--lang");
            if (!v)
                return ExitBadInput;
            lang = *v;
        } else if (a.rfind("--lang=", 0) == 0) {
            lang = a.substr(7);
        } else if (a == "--help" || a == "-h") {
            out << helpText(kReportUsage);
            return ExitOk;
        } else if (!a.empty() && a[0] == '-') {
            err << "shardscope-cli report: unknown option " << a << "\n";
            return ExitBadInput;
        } else {
            files.push_back(a);
        }
    }
    if (files.empty()) {
        err << "shardscope-cli report: missing PLAN.plan.json\n";
        return ExitBadInput;
    }
    if (output.empty()) {
        err << "shardscope-cli report: missing -o REPORT.pdf\n";
        return ExitBadInput;
    }
    if (page != "a4" && page != "letter") {
        err << "shardscope-cli report: --page must be a4 or letter, not " << page << "\n";
        return ExitBadInput;
    }
    if (!lang.empty() && lang != "en" && lang != "zh_CN") {
        err << "shardscope-cli report: --lang must be en or zh_CN, not " << lang << "\n";
        return ExitBadInput;
    }

    const Catalog &cat = catalog(err);
    std::vector<ReportPlan> plans;
    for (const std::string &file : files) {
        try {
            plans.push_back({readPlan(file, err),
                             QFileInfo(QString::fromStdString(file)).fileName(), {}});
        } catch (const PlanError &e) {
            err << "shardscope-cli: error: " << located(file, e.what()) << "\n";
            return ExitBadInput;
        }
    }

    const std::unique_ptr<QGuiApplication> app = ensureGuiApplication();
    if (!qobject_cast<QGuiApplication *>(QCoreApplication::instance())) {
        err << "shardscope-cli report: needs a QGuiApplication\n";
        return ExitFailure;
    }
    // The report follows the interface language; --lang overrides it for this report.
    const QString previous = currentLanguage();
    if (!lang.empty())
        setLanguage(QString::fromStdString(lang));
    ReportOptions options;
    options.pageSize = page == "letter" ? QPageSize::Letter : QPageSize::A4;
    QString error;
    const bool written =
        writePdfReport(QString::fromStdString(output), plans, cat, options, &error);
    if (!lang.empty())
        setLanguage(previous);
    if (!written) {
        err << "shardscope-cli report: " << error.toStdString() << "\n";
        return ExitFailure;
    }
    out << output << ": " << plans.size() << (plans.size() == 1 ? " plan\n" : " plans\n");
    return ExitOk;
}

} // namespace shardscope::cli
