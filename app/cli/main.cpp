#include "cli.h"
#include "i18n/language.h"

#include <QCoreApplication>
#include <QGuiApplication>
#include <iostream>
#include <memory>

int main(int argc, char **argv)
{
    std::vector<std::string> args(argv + 1, argv + argc);

    // --lang LANG chooses the language of the help and the reports for every verb (the report
    // verb reads it too); without it the system locale decides.
    std::string lang;
    const bool report = !args.empty() && args.front() == "report";
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--lang" && i + 1 < args.size()) {
            lang = args[i + 1];
            if (!report)
                args.erase(args.begin() + long(i), args.begin() + long(i) + 2);
            break;
        }
        if (args[i].rfind("--lang=", 0) == 0) {
            lang = args[i].substr(7);
            if (!report)
                args.erase(args.begin() + long(i));
            break;
        }
    }

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
    shardscope::setLanguage(QString::fromStdString(lang));
    return shardscope::cli::run(args, std::cout, std::cerr);
}
