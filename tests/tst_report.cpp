// PDF plan reports: the numbers a reader sees are the engine's (checked through pdftotext),
// page sizes, the comparison page, the CLI verb, failures, and the render time.
#include "cli/cli.h"
#include "core/catalog.h"
#include "core/estimate.h"
#include "core/files.h"
#include "core/stateaccounting.h"
#include "core/stepview.h"
#include "core/timeline.h"
#include "core/units.h"
#include "i18n/enginetext.h"
#include "i18n/language.h"
#include "report/pdfreport.h"
#include "report/stepseries.h"
#include "shardscope_config.h"
#include "testdata.h"

#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>
#include <sstream>

using namespace shardscope;

namespace {

QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

QString casePath(const QString &name)
{
    return qs(Catalog::builtin().dataDir()) + QStringLiteral("/cases/") + name;
}

ReportPlan loadCase(const QString &name)
{
    const std::string path = casePath(name).toStdString();
    return {parsePlanText(readTextFile(path), Catalog::builtin()), name, {}};
}

/// Text of a PDF as pdftotext writes it, its lines kept.
QString pdfLines(const QString &path)
{
    QProcess p;
    p.start(QStringLiteral("pdftotext"),
            {QStringLiteral("-enc"), QStringLiteral("UTF-8"), path, QStringLiteral("-")});
    if (!p.waitForFinished(30000) || p.exitCode() != 0)
        return {};
    return QString::fromUtf8(p.readAllStandardOutput());
}

/// Text of a PDF with every run of white space collapsed to one space.
QString pdfText(const QString &path)
{
    return pdfLines(path).simplified();
}

/// Text of one page (from 1) of a PDF.
QString pdfPage(const QString &path, int page)
{
    QProcess p;
    p.start(QStringLiteral("pdftotext"),
            {QStringLiteral("-enc"), QStringLiteral("UTF-8"), QStringLiteral("-f"),
             QString::number(page), QStringLiteral("-l"), QString::number(page), path,
             QStringLiteral("-")});
    if (!p.waitForFinished(30000) || p.exitCode() != 0)
        return {};
    return QString::fromUtf8(p.readAllStandardOutput()).simplified();
}

QString pdfInfo(const QString &path)
{
    QProcess p;
    p.start(QStringLiteral("pdfinfo"), {path});
    if (!p.waitForFinished(30000) || p.exitCode() != 0)
        return {};
    return QString::fromUtf8(p.readAllStandardOutput());
}

int pageCount(const QString &info)
{
    const QRegularExpressionMatch m =
        QRegularExpression(QStringLiteral("Pages:\\s+(\\d+)")).match(info);
    return m.hasMatch() ? m.captured(1).toInt() : -1;
}

double fullestNeed(const Estimate &e)
{
    double need = 0;
    for (const RankMemory &r : e.memory.ranks)
        need = std::max(need, r.peak_bytes + r.reserve.total());
    return need;
}

/// Whether `cell` is in `page` as at most `lines` pieces in order: a table cell wraps, and
/// pdftotext puts the lines of the cell beside it between its lines.
bool appearsWrapped(const QString &page, const QString &cell, int lines)
{
    qsizetype from = 0, at = 0;
    for (int piece = 0; piece < lines && at < cell.size(); ++piece) {
        qsizetype len = cell.size() - at, found = -1;
        for (; len > 0; --len) {
            found = page.indexOf(QStringView(cell).mid(at, len), from);
            if (found >= 0)
                break;
        }
        if (len == 0)
            return false;
        from = found + len;
        at += len;
    }
    return at == cell.size();
}

const QStringList kCases{
    QStringLiteral("hcie-ai-ddp.plan.json"), QStringLiteral("hcie-ai-fsdp.plan.json"),
    QStringLiteral("hcie-ai-tp8.plan.json"), QStringLiteral("hcie-ai-tp4-fsdp2.plan.json")};

std::vector<ReportPlan> fourPlans()
{
    std::vector<ReportPlan> plans;
    for (const QString &c : kCases)
        plans.push_back(loadCase(c));
    return plans;
}

} // namespace

class TestReport : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    ReportOptions m_options;

    QString path(const QString &name) const { return m_dir.filePath(name); }

private Q_SLOTS:
    void initTestCase()
    {
        cli::useInProcessReport(); // as shardscope-cli-qt does; shardscope-cli hands it over
        QVERIFY(m_dir.isValid());
        if (QStandardPaths::findExecutable(QStringLiteral("pdftotext")).isEmpty() ||
            QStandardPaths::findExecutable(QStringLiteral("pdfinfo")).isEmpty())
            QSKIP("pdftotext / pdfinfo (poppler-utils) not installed");
        m_options.generated = QDateTime(QDate(2026, 1, 2), QTime(3, 4));
    }

    void singlePlan_data()
    {
        QTest::addColumn<QString>("file");
        for (const QString &c : kCases)
            QTest::addRow("%s", qPrintable(c)) << c;
    }

    /// The verdict, the worst rank's need, every component at the peak, the capacity, the
    /// device and the footer all come out of the PDF as the engine computes them.
    void singlePlan()
    {
        QFETCH(QString, file);
        const ReportPlan rp = loadCase(file);
        const QString out = path(file + QStringLiteral(".pdf"));
        QString error;
        QVERIFY2(writePdfReport(out, {rp}, Catalog::builtin(), m_options, &error),
                 qPrintable(error));
        const QString text = pdfText(out);
        QVERIFY(!text.isEmpty());

        const Estimate e = estimate(rp.plan, Catalog::builtin());
        QVERIFY(text.contains(qs(rp.plan.name)));
        QVERIFY(
            text.contains(e.memory.fits ? QStringLiteral("Fits") : QStringLiteral("Does not fit")));
        for (const RankMemory &r : e.memory.ranks) {
            const double need = r.peak_bytes + r.reserve.total();
            QVERIFY2(text.contains(qs(formatGiB(need))), qPrintable(qs(formatGiB(need))));
            QVERIFY(text.contains(qs(formatGiB(r.peak_bytes))));
            QVERIFY(text.contains(qs(formatGiB(r.reserve.total()))));
            for (int c = 0; c < kComponentCount; ++c)
                QVERIFY2(text.contains(qs(formatGiB(r.peak().bytes[size_t(c)]))),
                         qPrintable(qs(formatGiB(r.peak().bytes[size_t(c)]))));
            const double left = e.memory.hbm_bytes - need;
            QVERIFY(text.contains(qs(formatGiB(std::abs(left)))));
        }
        QVERIFY(text.contains(qs(formatGiB(e.memory.hbm_bytes))));
        QVERIFY(text.contains(qs(formatGiB(e.memory.usable_bytes))));
        // Collectives and step time, as the engine estimates them.
        for (const Collective &c : e.communication) {
            QVERIFY(text.contains(qs(c.collective)));
            QVERIFY2(text.contains(qs(formatSeconds(c.time_s))),
                     qPrintable(qs(formatSeconds(c.time_s))));
            QVERIFY(text.contains(qs(formatBytes(c.bytes))));
        }
        if (e.step.step_s > 0) {
            QVERIFY(text.contains(qs(formatSeconds(e.step.step_s))));
            // Thousands separated, as everywhere else in the workbench.
            const QString tokens = qs(formatCount(std::llround(e.step.tokens_per_s)));
            QVERIFY2(text.contains(tokens + QStringLiteral(" tokens/s")), qPrintable(tokens));
            QVERIFY(e.step.tokens_per_s < 1000 || tokens.contains(QLatin1Char(',')));
        }
        // Memory over the step: the fullest rank's steady step, its peak and reserved bytes, and
        // the largest tensors alive at its peak.
        QVERIFY(text.contains(QStringLiteral("Memory over the step")));
        QVERIFY(text.contains(QStringLiteral("Largest tensors alive at the peak")));
        {
            size_t worst = 0;
            for (size_t i = 0; i < e.memory.ranks.size(); ++i) {
                const RankMemory &r = e.memory.ranks[i];
                const RankMemory &w = e.memory.ranks[worst];
                if (r.peak_bytes + r.reserve.total() > w.peak_bytes + w.reserve.total())
                    worst = i;
            }
            const StepView v = stepView(rp.plan, Catalog::builtin(), e.memory.ranks[worst].stage);
            QVERIFY(text.contains(QStringLiteral("Peak ") + qs(formatGiB(v.allocated_peak))));
            QVERIFY(text.contains(QStringLiteral("peak ") + qs(formatGiB(v.reserved_peak))));
            const std::vector<PeakGroup> groups = peakGroups(v);
            QVERIFY(!groups.empty());
            const PeakGroup &first = groups.front();
            const QString row = QString::fromUtf8(tensorKindLabel(first.kind).data()) + QLatin1Char(' ') +
                                tensorLayerText(first.kind, first.layers);
            QVERIFY2(text.contains(row), qPrintable(row));
            QVERIFY(text.contains(qs(formatGiB(first.bytes))));
        }
        QVERIFY(text.contains(QStringLiteral("Ascend 910B2")));
        QVERIFY(text.contains(QStringLiteral("Formula")));
        QVERIFY(text.contains(QStringLiteral("Sources")));
        QVERIFY(text.contains(QStringLiteral("ShardScope " SHARDSCOPE_VERSION)));
        QVERIFY(text.contains(QStringLiteral("2026-01-02 03:04")));
        QVERIFY(!text.contains(QStringLiteral("Comparison of")));
        // A percentage never leaves its sign on the next line.
        const QString lines = pdfLines(out);
        QVERIFY2(!QRegularExpression(QStringLiteral("(^|\\n)\\s*%")).match(lines).hasMatch(),
                 qPrintable(lines));
        // The rough count of the model states the case is about, beside the full accounting.
        const RoughStateAccounting ra = roughStateAccounting(rp.plan, e.memory);
        QVERIFY(text.contains(QStringLiteral("Model states, counted roughly")));
        QVERIFY2(text.contains(qs(formatGB(ra.total_bytes, 1)) + QStringLiteral(" per rank unsharded")),
                 qPrintable(qs(formatGB(ra.total_bytes, 1))));
    }

    /// The HCIE-AI case's worked answer: 14 + 14 + 28 + 56 = 112 GB per rank at a nominal 7B,
    /// about 14 GB fully sharded over the 8 ranks.
    void roughStatesOfTheCase()
    {
        const ReportPlan rp = loadCase(QStringLiteral("hcie-ai-ddp.plan.json"));
        const QString out = path(QStringLiteral("rough.pdf"));
        QVERIFY(writePdfReport(out, {rp}, Catalog::builtin(), m_options));
        const QString text = pdfText(out);
        QVERIFY2(text.contains(QStringLiteral("At a nominal 7B parameters: 14 + 14 + 28 + 56 = 112 GB")),
                 qPrintable(text.left(3000)));
        QVERIFY(text.contains(QStringLiteral("Fully sharded over dp x cp = 8 ranks: about 14 GB per rank")));
        // The same figures as the CLI's estimate prints.
        const std::string cli = cli::estimateTable(rp.plan);
        QVERIFY(cli.find("at a nominal 7B parameters: 112 GB") != std::string::npos);
    }

    /// Five plans on one device: its profile and sources once, in an appendix.
    void deviceProfileOnce()
    {
        std::vector<ReportPlan> plans = fourPlans();
        plans.push_back(loadCase(QStringLiteral("hcie-ai-fsdp-cp.plan.json")));
        const QString out = path(QStringLiteral("five.pdf"));
        QVERIFY(writePdfReport(out, plans, Catalog::builtin(), m_options));
        const QString text = pdfText(out);
        QCOMPARE(text.count(QStringLiteral("Device profile: Ascend 910B2")), 1);
        QCOMPARE(text.count(QStringLiteral("Device profile:")), 1);
        QVERIFY(text.indexOf(QStringLiteral("Appendix: the device profile")) >
                text.lastIndexOf(qs(plans.back().plan.name)));
        const int pages = pageCount(pdfInfo(out));
        QVERIFY(pages > 0);
        qInfo("five-plan report: %d pages", pages);
    }

    /// The five case plans flow: a plan starts on the page the previous one ends on when it has
    /// room there, and the step figure takes the rest of a page rather than leaving it empty
    /// (16 pages when each plan and each step figure began a page of its own). No figure is
    /// cut: its heading, plot axis and caption are on one page.
    void fiveCasePlansFlow()
    {
        std::vector<ReportPlan> plans = fourPlans();
        plans.push_back(loadCase(QStringLiteral("hcie-ai-fsdp-cp.plan.json")));
        const QString out = path(QStringLiteral("five-flow.pdf"));
        QVERIFY(writePdfReport(out, plans, Catalog::builtin(), m_options));
        const int pages = pageCount(pdfInfo(out));
        QVERIFY2(pages > 0 && pages <= 14, qPrintable(QString::number(pages)));
        const QString heading = QStringLiteral("Memory over the step");
        const QString axis = QStringLiteral("Allocations and frees of the step (event index)");
        const QString caption = QStringLiteral("as the dark line; the backward is shaded.");
        int figures = 0;
        for (int page = 1; page <= pages; ++page) {
            const QString text = pdfPage(out, page);
            const int here = int(text.count(heading));
            QVERIFY2(int(text.count(axis)) == here && int(text.count(caption)) == here,
                     qPrintable(QStringLiteral("page %1: %2").arg(page).arg(text.left(2000))));
            figures += here;
        }
        QCOMPARE(figures, int(plans.size()));
    }

    /// The tensor kinds' names in English are the core's labels.
    void tensorKindNames()
    {
        for (int k = 0; k < kTensorKindCount; ++k)
            QCOMPARE(tensorKindName(TensorKind(k)), QString::fromUtf8(tensorKindLabel(TensorKind(k)).data()));
    }

    /// The report follows the interface language: Chinese text renders (Noto Sans CJK embedded)
    /// and the numbers still extract (a Latin primary font).
    void chineseReport()
    {
        if (!availableLanguages().contains(QStringLiteral("zh_CN")))
            QSKIP("built without translations");
        QCOMPARE(setLanguage(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
        const ReportPlan rp = loadCase(kCases.at(0));
        const QString out = path(QStringLiteral("zh.pdf"));
        const bool ok = writePdfReport(out, {rp}, Catalog::builtin(), m_options);
        // The component table of the first rank, as the report wrote it.
        const Estimate e = estimate(rp.plan, Catalog::builtin());
        const RankMemory &rank = e.memory.ranks.front();
        const MemoryExplanation ex =
            explainMemory(rp.plan, Catalog::builtin(), rank, rank.peak_phase);
        QStringList formulas, assumptions;
        for (const ComponentExplanation &c : ex) {
            formulas << translated(c.formula);
            assumptions << translated(c.assumptions);
        }
        QStringList notes;
        for (const Collective &c : e.communication)
            notes << translatedNote(c.note);
        setLanguage(QStringLiteral("en"));
        QVERIFY(ok);
        // Noto Sans CJK shares glyphs between ideographs and Kangxi radicals (方 and U+2F45), and
        // the extracted text may name either; NFKC folds them together.
        const QString text = pdfText(out).normalized(QString::NormalizationForm_KC);
        QVERIFY2(text.contains(QStringLiteral("无法容纳")), qPrintable(text.left(400)));
        QVERIFY(text.contains(QStringLiteral("方案")));
        QVERIFY(text.contains(qs(formatGiB(e.memory.hbm_bytes))));
        QVERIFY(text.contains(qs(formatGiB(fullestNeed(e)))));
        // The engine's formulas and assumptions are in Chinese too, with their numbers.
        auto compact = [](const QString &s) {
            return s.normalized(QString::NormalizationForm_KC).remove(QLatin1Char(' '));
        };
        const QString all = compact(text);
        for (int c = 0; c < kComponentCount; ++c) {
            QVERIFY2(appearsWrapped(all, compact(formulas[c]), 4), qPrintable(formulas[c]));
            QVERIFY2(appearsWrapped(all, compact(assumptions[c]), 4), qPrintable(assumptions[c]));
        }
        QVERIFY(formulas[int(Component::OptimizerStates)].contains(QStringLiteral("个状态")));
        QVERIFY(formulas[int(Component::OptimizerStates)].contains(
            qs(formatGiB(rank.peak()[Component::OptimizerStates]))));
        // The collectives table: what each carries, in Chinese, after its phase.
        QVERIFY(!e.communication.empty());
        for (size_t i = 0; i < e.communication.size(); ++i) {
            const Collective &c = e.communication[i];
            QVERIFY2(notes[int(i)] != qs(c.note), qPrintable(notes[int(i)]));
            QVERIFY2(appearsWrapped(all, compact(notes[int(i)]), 3), qPrintable(notes[int(i)]));
            QVERIFY2(!all.contains(compact(qs(c.note))), qPrintable(qs(c.note)));
        }
        QVERIFY2(all.contains(compact(QStringLiteral("反向：")) + compact(notes.front()).left(3)),
                 qPrintable(all));
        QProcess fonts;
        fonts.start(QStringLiteral("pdffonts"), {out});
        QVERIFY(fonts.waitForFinished(30000));
        const QString list = QString::fromUtf8(fonts.readAllStandardOutput());
        QVERIFY2(list.contains(QStringLiteral("CJK")), qPrintable(list));
        QVERIFY(list.contains(QStringLiteral("DejaVuSans")));
    }

    void pageSizes_data()
    {
        QTest::addColumn<int>("size");
        QTest::addColumn<QString>("expected");
        QTest::addRow("a4") << int(QPageSize::A4) << QStringLiteral("(A4)");
        QTest::addRow("letter") << int(QPageSize::Letter) << QStringLiteral("(letter)");
    }

    void pageSizes()
    {
        QFETCH(int, size);
        QFETCH(QString, expected);
        ReportOptions o = m_options;
        o.pageSize = QPageSize::PageSizeId(size);
        const QString out = path(QStringLiteral("size-%1.pdf").arg(size));
        QVERIFY(writePdfReport(out, {loadCase(kCases.at(1))}, Catalog::builtin(), o));
        QVERIFY2(pdfInfo(out).contains(expected), qPrintable(pdfInfo(out)));
    }

    /// Several plans: a comparison page first, then every plan.
    void comparison()
    {
        const std::vector<ReportPlan> plans = fourPlans();
        const QString out = path(QStringLiteral("four.pdf"));
        QVERIFY(writePdfReport(out, plans, Catalog::builtin(), m_options));
        const QString text = pdfText(out);
        QVERIFY(text.contains(QStringLiteral("Comparison of 4 plans")));
        const int comparisonAt = text.indexOf(QStringLiteral("Comparison of 4 plans"));
        for (const ReportPlan &rp : plans) {
            QVERIFY(text.indexOf(qs(rp.plan.name)) > comparisonAt);
            const Estimate e = estimate(rp.plan, Catalog::builtin());
            QVERIFY(text.contains(qs(formatGiB(e.memory.peak_bytes))));
        }
        const int pages = pageCount(pdfInfo(out));
        QVERIFY2(pages >= 5, qPrintable(QString::number(pages)));
        qInfo("four-plan report: %d pages, %lld bytes", pages, QFileInfo(out).size());
    }

    /// A four-plan report renders in under a second (the best of three runs).
    void renderTime()
    {
        const std::vector<ReportPlan> plans = fourPlans();
        qint64 best = std::numeric_limits<qint64>::max();
        for (int i = 0; i < 3; ++i) {
            QElapsedTimer t;
            t.start();
            const QByteArray pdf = pdfReportBytes(plans, Catalog::builtin(), m_options);
            best = std::min(best, t.elapsed());
            QVERIFY(pdf.startsWith("%PDF"));
        }
        qInfo("four-plan report rendered in %lld ms", best);
        QVERIFY2(best < 1000, qPrintable(QString::number(best)));
    }

    void benchmarkFourPlans()
    {
        const std::vector<ReportPlan> plans = fourPlans();
        QBENCHMARK
        {
            const QByteArray pdf = pdfReportBytes(plans, Catalog::builtin(), m_options);
            QVERIFY(!pdf.isEmpty());
        }
    }

    void cliReport()
    {
        const QString out = path(QStringLiteral("cli.pdf"));
        std::ostringstream o, err;
        const int rc = cli::run({"report", casePath(kCases.at(0)).toStdString(),
                                 casePath(kCases.at(1)).toStdString(), "-o", out.toStdString(),
                                 "--page", "letter"},
                                o, err);
        QCOMPARE(rc, int(cli::ExitOk));
        QVERIFY2(err.str().empty(), err.str().c_str());
        const QString info = pdfInfo(out);
        QVERIFY(info.contains(QStringLiteral("(letter)")));
        QVERIFY(pageCount(info) >= 3);
        QVERIFY(pdfText(out).contains(QStringLiteral("hcie-ai-fsdp.plan.json")));
    }

    void cliErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exit");
        const QString plan = casePath(kCases.at(0));
        QTest::addRow("no output")
            << QStringList{QStringLiteral("report"), plan} << int(cli::ExitBadInput);
        QTest::addRow("no plan") << QStringList{QStringLiteral("report"), QStringLiteral("-o"),
                                                QStringLiteral("x.pdf")}
                                 << int(cli::ExitBadInput);
        QTest::addRow("bad page") << QStringList{QStringLiteral("report"), plan,
                                                 QStringLiteral("-o"),     QStringLiteral("x.pdf"),
                                                 QStringLiteral("--page"), QStringLiteral("a3")}
                                  << int(cli::ExitBadInput);
        QTest::addRow("missing plan")
            << QStringList{QStringLiteral("report"), QStringLiteral("/no/such.plan.json"),
                           QStringLiteral("-o"), QStringLiteral("x.pdf")}
            << int(cli::ExitBadInput);
        QTest::addRow("unwritable")
            << QStringList{QStringLiteral("report"), plan, QStringLiteral("-o"),
                           QStringLiteral("/no/such/dir/x.pdf")}
            << int(cli::ExitFailure);
    }

    void cliErrors()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exit);
        std::vector<std::string> a;
        for (const QString &s : args)
            a.push_back(s.toStdString());
        std::ostringstream o, err;
        QCOMPARE(cli::run(a, o, err), exit);
        QVERIFY(!err.str().empty());
    }

    // The binary's own argument handling (main.cpp): --lang before the verb used to make the
    // report fail ("needs a QGuiApplication"), and an unknown language passed in silence.
    void cliLanguageAnywhere()
    {
        const QString cliPath = qEnvironmentVariable("SHARDSCOPE_CLI");
        QVERIFY2(QFileInfo::exists(cliPath), qPrintable(cliPath));
        const QString out = path(QStringLiteral("lang.pdf"));
        QProcess p;
        p.start(cliPath, {QStringLiteral("--lang"), QStringLiteral("zh_CN"), QStringLiteral("report"),
                          casePath(kCases.at(0)), QStringLiteral("-o"), out});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        QVERIFY(pdfText(out).normalized(QString::NormalizationForm_KC).contains(QStringLiteral("无法容纳")));
        p.start(cliPath, {QStringLiteral("--lang"), QStringLiteral("xx"), QStringLiteral("estimate"),
                          casePath(kCases.at(0))});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 2);
        QVERIFY(p.readAllStandardError().contains("--lang must be en or zh_CN, not \"xx\""));
    }

    // shardscope-cli links no Qt: it runs shardscope-cli-qt, found beside it in a build tree,
    // with the same arguments and streams; its exit status is the report's.
    void cliHandsTheReportOver()
    {
        const QString cliPath = qEnvironmentVariable("SHARDSCOPE_CLI");
        QVERIFY2(QFileInfo::exists(cliPath), qPrintable(cliPath));
        QVERIFY(QFileInfo::exists(
            QFileInfo(cliPath).dir().filePath(QStringLiteral("shardscope-cli-qt"))));
        const QString out = path(QStringLiteral("handed.pdf"));
        QProcess p;
        p.start(cliPath,
                {QStringLiteral("report"), casePath(kCases.at(1)), QStringLiteral("-o"), out});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        QVERIFY(pdfText(out).contains(QStringLiteral("hcie-ai-fsdp.plan.json")));
        p.start(cliPath,
                {QStringLiteral("report"), casePath(kCases.at(1)), QStringLiteral("--page"),
                 QStringLiteral("a5"), QStringLiteral("-o"), out});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), int(cli::ExitBadInput));
        QVERIFY(p.readAllStandardError().contains("--page must be a4 or letter, not a5"));
    }

    // The help is translated, so shardscope-cli hands it over too: in the language --lang or
    // the system chooses, for the command line as a whole and for each verb.
    void cliHandsTheHelpOver()
    {
        const QString cliPath = qEnvironmentVariable("SHARDSCOPE_CLI");
        QVERIFY2(QFileInfo::exists(cliPath), qPrintable(cliPath));
        auto help = [&](const QStringList &args, const QByteArray &lang) {
            QProcess p;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.remove(QStringLiteral("LANGUAGE"));
            env.remove(QStringLiteral("LC_ALL"));
            env.remove(QStringLiteral("LC_MESSAGES"));
            env.insert(QStringLiteral("LANG"), QString::fromLatin1(lang));
            p.setProcessEnvironment(env);
            p.start(cliPath, args);
            if (!p.waitForFinished(60000))
                return QByteArray("(no answer)");
            return QByteArray::number(p.exitCode()) + " " + p.readAllStandardOutput();
        };
        const QString zh = QStringLiteral("用法");
        QVERIFY(QString::fromUtf8(help({QStringLiteral("--lang"), QStringLiteral("zh_CN"),
                                        QStringLiteral("--help")},
                                       "C.UTF-8"))
                    .startsWith(QStringLiteral("0 ") + zh));
        QVERIFY(QString::fromUtf8(
                    help({QStringLiteral("search"), QStringLiteral("--help")}, "zh_CN.UTF-8"))
                    .startsWith(QStringLiteral("0 ") + zh));
        QVERIFY(QString::fromUtf8(
                    help({QStringLiteral("estimate"), QStringLiteral("-h")}, "zh_CN.UTF-8"))
                    .startsWith(QStringLiteral("0 ") + zh));
        QVERIFY(help({QStringLiteral("compare"), QStringLiteral("--help")}, "C.UTF-8")
                    .startsWith("0 Usage: shardscope-cli compare"));
        // No verb, and an unknown one: the usage on stderr, exit 2, as before.
        QVERIFY(help({}, "C.UTF-8").startsWith("2 "));
        QVERIFY(help({QStringLiteral("frobnicate")}, "C.UTF-8").startsWith("2 "));
    }

    // A shardscope-cli without shardscope-cli-qt where it looks says so for what needs it,
    // naming the places, and writes nothing; estimate, search and compare do not need it.
    void cliWithoutItsQtProgram()
    {
        const QString cliPath = qEnvironmentVariable("SHARDSCOPE_CLI");
        QVERIFY2(QFileInfo::exists(cliPath), qPrintable(cliPath));
        QTemporaryDir alone;
        QVERIFY(alone.isValid());
        const QString copy = alone.filePath(QStringLiteral("shardscope-cli"));
        QVERIFY(QFile::copy(cliPath, copy));
        const QString out = alone.filePath(QStringLiteral("none.pdf"));
        QProcess p;
        p.start(copy,
                {QStringLiteral("report"), casePath(kCases.at(0)), QStringLiteral("-o"), out});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), int(cli::ExitFailure));
        QByteArray err = p.readAllStandardError();
        QVERIFY2(err.contains("cannot find shardscope-cli-qt, which runs report"), err.constData());
        QVERIFY2(err.contains(alone.filePath(QStringLiteral("shardscope-cli-qt")).toUtf8()),
                 err.constData());
        QVERIFY(!QFileInfo::exists(out));
        p.start(copy, {QStringLiteral("search"), QStringLiteral("--help")});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), int(cli::ExitFailure));
        err = p.readAllStandardError();
        QVERIFY2(err.contains("cannot find shardscope-cli-qt, which runs search"), err.constData());
        QVERIFY(p.readAllStandardOutput().isEmpty());
        // The verbs it runs itself do not need it, nor --version.
        p.start(copy, {QStringLiteral("--version")});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        QVERIFY(p.readAllStandardOutput().startsWith("shardscope-cli "));
        p.start(copy, {QStringLiteral("estimate"), casePath(kCases.at(1))});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        QVERIFY(p.readAllStandardOutput().contains("Verdict: "));
        p.start(copy, {QStringLiteral("--lang"), QStringLiteral("zh_CN"), QStringLiteral("compare"),
                       casePath(kCases.at(0)), casePath(kCases.at(1))});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        QVERIFY(!p.readAllStandardOutput().isEmpty());
    }

    // A full disk (an injected file size limit) leaves the previous report whole.
    void fullDiskKeepsThePreviousReport()
    {
        const QString out = path(QStringLiteral("kept.pdf"));
        QVERIFY(writePdfReport(out, {loadCase(kCases.at(0))}, Catalog::builtin(), m_options, nullptr));
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray before = f.readAll();
        f.close();
        QString error;
        {
            testing::FileSizeLimit limit(4096);
            QVERIFY(limit.active());
            QVERIFY(!writePdfReport(out, {loadCase(kCases.at(1))}, Catalog::builtin(), m_options, &error));
        }
        QVERIFY2(error.contains(QStringLiteral("unchanged")), qPrintable(error));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), before);
    }

    // A fine-tuning plan's report names its method and trained count, and explains the
    // frozen base and the adapters.
    void trainingMethodInTheReport()
    {
        ReportPlan rp = loadCase(kCases.at(0));
        rp.plan.training.method.method = TrainingMethod::LoRA;
        rp.plan.training.method.lora.rank = 16;
        rp.plan.training.method.lora.targets = kTargetAllLinear;
        const QString out = path(QStringLiteral("lora.pdf"));
        QVERIFY(writePdfReport(out, {rp}, Catalog::builtin(), m_options, nullptr));
        const QString text = pdfText(out);
        QVERIFY2(text.contains(QStringLiteral("LoRA rank 16; 39,976,960 of 6,738,415,616 parameters trained")),
                 qPrintable(text.left(600)));
        QVERIFY(text.contains(QStringLiteral("LoRA rank 16 on q, k, v, o, gate, up, down")));
    }

    void writeFailureLeavesNoFile()
    {
        QString error;
        QVERIFY(!writePdfReport(QStringLiteral("/no/such/dir/x.pdf"), {loadCase(kCases.at(0))},
                                Catalog::builtin(), m_options, &error));
        QVERIFY(!error.isEmpty());
        QVERIFY(!writePdfReport(path(QStringLiteral("empty.pdf")), {}, Catalog::builtin(),
                                m_options, &error));
        QVERIFY(!QFile::exists(path(QStringLiteral("empty.pdf"))));
    }
};

QTEST_MAIN(TestReport)
#include "tst_report.moc"
