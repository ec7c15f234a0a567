// shardscope-cli, and (built with SHARDSCOPE_REPORT_PROGRAM) shardscope-report, the same
// command line with the report verb linked in. shardscope-cli links Qt Core alone: Qt Gui's
// libraries, which only the PDF report needs, take half of a process's start (a Qt Core program
// starts in 12 ms on a 2-core virtual machine, one that links Qt Gui in 26 ms), so its `report`
// runs shardscope-report in its place.
#include "cli.h"
#include "core/catalog.h"
#include "i18n/language.h"

#include <QCoreApplication>
#ifdef SHARDSCOPE_REPORT_PROGRAM
#include <QGuiApplication>
#endif
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <unistd.h>

namespace {

#ifndef SHARDSCOPE_REPORT_PROGRAM
/// Replaces this process with shardscope-report running `args` (the verb first): the same
/// streams and exit status, and the data directory this program found. Returns only on failure.
int runReportProgram(const std::vector<std::string> &args)
{
    std::vector<std::string> looked;
    const std::string program = shardscope::cli::reportProgram(&looked);
    if (program.empty()) {
        std::cerr << "shardscope-cli report: cannot find shardscope-report, which renders the "
                     "reports (";
        if (looked.empty())
            std::cerr << "/proc/self/exe does not say where shardscope-cli is";
        for (size_t i = 0; i < looked.size(); ++i)
            std::cerr << (i ? ", " : "looked for ") << looked[i];
        std::cerr << "); reinstall ShardScope\n";
        return shardscope::cli::ExitFailure;
    }
    if (const std::string data = shardscope::locateDataDir(); !data.empty())
        ::setenv("SHARDSCOPE_DATA_DIR", data.c_str(), 1);
    std::vector<char *> argv{const_cast<char *>(program.c_str())};
    for (const std::string &a : args)
        argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    std::cout.flush();
    ::execv(program.c_str(), argv.data());
    const int error = errno;
    std::cerr << "shardscope-cli report: cannot run " << program << ": " << std::strerror(error)
              << "\n";
    return shardscope::cli::ExitFailure;
}
#endif

} // namespace

int main(int argc, char **argv)
{
    std::vector<std::string> args(argv + 1, argv + argc);

    // --lang LANG chooses the language of the help and the reports for every verb, wherever it
    // stands; without it the system locale decides. It is taken out here and the report verb
    // receives it back as its own option.
    std::string lang;
    bool langGiven = false;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--lang") {
            if (i + 1 >= args.size()) {
                std::cerr << "shardscope-cli: --lang needs a value (en or zh_CN)\n";
                return shardscope::cli::ExitBadInput;
            }
            lang = args[i + 1];
            args.erase(args.begin() + long(i), args.begin() + long(i) + 2);
            langGiven = true;
            break;
        }
        if (args[i].rfind("--lang=", 0) == 0) {
            lang = args[i].substr(7);
            args.erase(args.begin() + long(i));
            langGiven = true;
            break;
        }
    }
    if (langGiven && lang != "en" && lang != "zh_CN") {
        std::cerr << "shardscope-cli: --lang must be en or zh_CN, not \"" << lang << "\"\n";
        return shardscope::cli::ExitBadInput;
    }
    const bool report = !args.empty() && args.front() == "report";
    if (report && langGiven)
        args.insert(args.end(), {"--lang", lang});

#ifdef SHARDSCOPE_REPORT_PROGRAM
    shardscope::cli::useInProcessReport();
    // The report verb draws with Qt Gui on the offscreen platform (no display needed); the other
    // verbs need only Qt Core.
    static char platformFlag[] = "-platform";
    static char platform[] = "offscreen";
    static char *qtArgv[] = {argv[0], platformFlag, platform, nullptr};
    static int qtArgc = report ? 3 : 1;
    std::unique_ptr<QCoreApplication> app;
    if (report)
        app = std::make_unique<QGuiApplication>(qtArgc, qtArgv);
    else
        app = std::make_unique<QCoreApplication>(qtArgc, qtArgv);
#else
    if (report)
        return runReportProgram(args);
    static int qtArgc = 1;
    static char *qtArgv[] = {argv[0], nullptr};
    auto app = std::make_unique<QCoreApplication>(qtArgc, qtArgv);
#endif
    shardscope::setLanguage(QString::fromStdString(lang));
    return shardscope::cli::run(args, std::cout, std::cerr);
}
