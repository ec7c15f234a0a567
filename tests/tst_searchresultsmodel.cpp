#include "widgets/plandocument.h"
#include "widgets/searchjob.h"
#include "widgets/searchpanel.h"
#include "widgets/searchresultsmodel.h"

#include "core/catalog.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>
#include <QUndoStack>

using namespace shardscope;

class TestSearchResultsModel : public QObject
{
    Q_OBJECT

private:
    static bool loadCase(PlanDocument &doc)
    {
        return doc.loadAsUntitled(QString::fromStdString(locateDataDir()) +
                                      QStringLiteral("/cases/hcie-ai-ddp.plan.json"),
                                  nullptr);
    }

private Q_SLOTS:
    void modelIsConsistent()
    {
        SearchResultsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.columnCount(), int(SearchResultsModel::ColumnCount));
        PlanDocument doc(Catalog::builtin());
        QVERIFY(loadCase(doc));
        SearchResult r;
        r.plan = doc.plan();
        r.peak_bytes = 40e9;
        r.required_bytes = 48e9;
        r.step_s = 12.5;
        r.tokens_per_s = 20000;
        r.mfu = 0.41;
        r.pareto = true;
        model.setResults({r, r, r});
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.index(1, SearchResultsModel::RankColumn).data().toInt(), 2);
        QCOMPARE(model.index(0, SearchResultsModel::StepTimeColumn).data(SearchResultsModel::SortRole).toDouble(), 12.5);
        QCOMPARE(model.index(0, SearchResultsModel::LayoutColumn).data().toString(), QStringLiteral("DDP8"));
        model.setResults({});
        QCOMPARE(model.rowCount(), 0);
    }

    void searchRunsInTheBackgroundAndLoadsAResult()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(loadCase(doc));
        SearchPanel panel(&doc);
        QAbstractItemModelTester tester(panel.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy finished(panel.job(), &SearchJob::finished);
        QSignalSpy progress(panel.job(), &SearchJob::progress);
        panel.run();
        QVERIFY(panel.job()->isRunning());
        QVERIFY(finished.wait(120000));
        QVERIFY(!panel.job()->isRunning());
        QVERIFY(progress.count() >= 1);
        const SearchOutcome &o = panel.job()->outcome();
        QVERIFY(o.evaluated > 0);
        QCOMPARE(panel.model()->rowCount(), int(o.ranked.size()));
        QVERIFY2(!o.ranked.empty(), qPrintable(panel.statusText()));
        // The search results fit and are valid plans: loading one is an undoable edit.
        QVERIFY(panel.loadResult(0));
        // The result's layout, without the searched plan's name (it named another layout).
        Plan loaded = o.ranked.front().plan;
        loaded.name.clear();
        QVERIFY(planToJson(doc.plan()) == planToJson(loaded));
        QVERIFY(doc.plan().name.empty());
        QVERIFY(doc.estimate().memory.fits);
        QCOMPARE(doc.undoStack()->count(), 1);
        doc.undoStack()->undo();
        QVERIFY(doc.plan().parallel.sharding == Sharding::None);
    }

    void searchCanBeCancelled()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(loadCase(doc));
        SearchJob job(doc.catalog());
        QSignalSpy finished(&job, &SearchJob::finished);
        SearchRequest request;
        request.base = doc.plan();
        job.start(request);
        job.stop();
        QVERIFY(finished.wait(120000));
        QVERIFY(!job.isRunning());
    }

    void destroyingARunningJobIsSafe()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(loadCase(doc));
        auto *job = new SearchJob(doc.catalog());
        SearchRequest request;
        request.base = doc.plan();
        job->start(request);
        delete job;
        QTest::qWait(50);
    }
};

QTEST_MAIN(TestSearchResultsModel)
#include "tst_searchresultsmodel.moc"
