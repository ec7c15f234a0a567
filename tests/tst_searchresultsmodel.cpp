#include "widgets/plandocument.h"
#include "widgets/searchjob.h"
#include "widgets/searchpanel.h"
#include "widgets/searchresultsmodel.h"
#include "widgets/layouttext.h"

#include "core/catalog.h"
#include "core/units.h"

#include <QAbstractItemModelTester>
#include <QLabel>
#include <QSignalSpy>
#include <QCheckBox>
#include <QHeaderView>
#include <QTableView>
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
    /// The layout text names what the search's axes chose.
    void layoutTextShowsTheAxes()
    {
        Plan p;
        p.parallel.dp = 16;
        p.parallel.tp = 2;
        p.parallel.sp = true;
        p.parallel.pp = 16;
        p.parallel.first_stage_layers = 3;
        p.parallel.last_stage_layers = 2;
        p.parallel.cp = 4;
        p.parallel.cp_algo = CpAlgo::Hybrid;
        p.parallel.ulysses_degree = 2;
        p.parallel.sharding = Sharding::Full;
        p.parallel.dp_shard = 4;
        QCOMPARE(layoutText(p), QStringLiteral("TP2+SP x PP16(3/2) x CP4-hybrid(2x2) x HSDP16(4x4)"));
        p.parallel.cp_algo = CpAlgo::Ulysses;
        p.parallel.dp_shard = 0;
        p.parallel.first_stage_layers = p.parallel.last_stage_layers = 0;
        QCOMPARE(layoutText(p), QStringLiteral("TP2+SP x PP16 x CP4-Ulysses x FSDP16"));
    }

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

    /// ZeRO-1 and ZeRO-2 rows differ in a column of their own; exposed communication shown.
    void shardingAndCommunicationColumns()
    {
        SearchResultsModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        PlanDocument doc(Catalog::builtin());
        QVERIFY(loadCase(doc));
        SearchResult zero1;
        zero1.plan = doc.plan();
        zero1.plan.parallel.sharding = Sharding::Optimizer;
        zero1.step.communication_s = 0.25;
        SearchResult zero2 = zero1;
        zero2.plan.parallel.sharding = Sharding::Grads;
        zero2.step.communication_s = 0.5;
        model.setResults({zero1, zero2});
        const QString a = model.index(0, SearchResultsModel::ShardingColumn).data().toString();
        const QString b = model.index(1, SearchResultsModel::ShardingColumn).data().toString();
        QVERIFY(a.contains(QStringLiteral("ZeRO-1")));
        QVERIFY(b.contains(QStringLiteral("ZeRO-2")));
        QCOMPARE(model.headerData(SearchResultsModel::CommunicationColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Exposed comm."));
        QCOMPARE(model.index(1, SearchResultsModel::CommunicationColumn).data().toString(),
                 QString::fromStdString(formatSeconds(0.5)));
        QCOMPARE(model.index(0, SearchResultsModel::CommunicationColumn).data(SearchResultsModel::SortRole).toDouble(), 0.25);
        QVERIFY(!model.isStale());
        model.setStale(true);
        QVERIFY(model.index(0, 0).data(Qt::ForegroundRole).isValid());
        model.setResults({zero1});
        QVERIFY(!model.isStale());
    }

    /// Before any search the results table's headings are whole ("Micro-batch x accum" was cut
    /// at both ends).
    void headingsAreWholeBeforeAnySearch()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(loadCase(doc));
        SearchPanel panel(&doc);
        const QTableView *table = panel.findChild<QTableView *>();
        QVERIFY(table);
        const QHeaderView *h = table->horizontalHeader();
        for (int c = 0; c < h->count(); ++c) {
            const QString text = table->model()->headerData(c, Qt::Horizontal).toString();
            QVERIFY2(h->sectionSize(c) >= h->fontMetrics().horizontalAdvance(text), qPrintable(text));
        }
    }

    /// The global batch is the panel's, set by the user: opening another layout of the same
    /// case (TP8: 1 sequence per step; DDP: 8) does not change what is searched.
    void globalBatchIsKeptAcrossPlans()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(loadCase(doc));
        SearchPanel panel(&doc);
        const int64_t ddpBatch = panel.request().global_batch;
        QVERIFY(doc.loadAsUntitled(QString::fromStdString(locateDataDir()) +
                                       QStringLiteral("/cases/hcie-ai-tp8.plan.json"),
                                   nullptr));
        QCOMPARE(doc.plan().parallel.dp, 1);
        QCOMPARE(panel.request().global_batch, ddpBatch);
        // 1M tokens of 32K: 32 sequences, by default.
        QCOMPARE(ddpBatch, int64_t((1 << 20) / 32768));
        panel.setGlobalBatch(16, SearchPanel::BatchUnit::Sequences);
        QCOMPARE(panel.request().global_batch, int64_t(16));
        panel.setGlobalBatch(4 * 32768, SearchPanel::BatchUnit::Tokens);
        QCOMPARE(panel.request().global_batch, int64_t(4));
        // Constraints come with the request.
        QCOMPARE(panel.request().fixed_tp, 0);
        QCOMPARE(int(panel.request().allowed_recompute), 0b111);
        QCOMPARE(int(panel.request().allowed_offload), 0b111);
        // Every axis by default; unticking one takes it out of the request.
        QCOMPARE(panel.request().axes, uint32_t(kSearchAllAxes));
        const QList<QCheckBox *> boxes = panel.findChildren<QCheckBox *>();
        QCheckBox *hsdp = nullptr;
        for (QCheckBox *b : boxes)
            if (b->text() == QStringLiteral("HSDP"))
                hsdp = b;
        QVERIFY(hsdp);
        hsdp->setChecked(false);
        QCOMPARE(panel.request().axes, uint32_t(kSearchAllAxes & ~kSearchDpShard));
    }

    /// After a search: the Pareto front drawn and loadable; results marked stale once the
    /// plan's sequence changes, not when one of them is loaded.
    void paretoChartAndStaleResults()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(loadCase(doc));
        SearchPanel panel(&doc);
        panel.setGlobalBatch(8, SearchPanel::BatchUnit::Sequences);
        QSignalSpy finished(panel.job(), &SearchJob::finished);
        panel.run();
        QVERIFY(finished.wait(120000));
        const SearchOutcome &o = panel.job()->outcome();
        QVERIFY(!o.pareto.empty());
        // The summary says how many were estimated, not those estimated that fit as if they were
        // every fit.
        QVERIFY(!o.fitting_complete);
        const QLabel *status = panel.findChild<QLabel *>(QStringLiteral("searchStatus"));
        QVERIFY(status);
        QVERIFY2(status->text().contains(QString::fromStdString(formatCount((long long)o.estimated)) +
                                         QStringLiteral(" estimated")),
                 qPrintable(status->text()));
        QVERIFY(!status->text().contains(QStringLiteral(" fit, in ")));
        const QList<QPointF> points = panel.paretoPoints();
        QCOMPARE(points.size(), int(o.pareto.size()));
        QCOMPARE(points.front().x(), o.pareto.front().required_bytes / kGiB);
        QCOMPARE(points.front().y(), o.pareto.front().step_s);
        QVERIFY(!panel.isStale());
        QVERIFY(panel.loadParetoPoint(0));
        QVERIFY(doc.plan().parallel.sharding == o.pareto.front().plan.parallel.sharding);
        QVERIFY(doc.plan().memory.recompute == o.pareto.front().plan.memory.recompute);
        QVERIFY(!panel.isStale()); // a layout the search covered
        Plan longer = doc.plan();
        longer.training.seq_len = 65536;
        QVERIFY(doc.apply(longer, QStringLiteral("longer")));
        QVERIFY(panel.isStale());
        QVERIFY(panel.model()->isStale());
        doc.undoStack()->undo();
        QVERIFY(!panel.isStale());
    }

    /// "The largest sequence / micro-batch that fits" for the open layout.
    void largestFitAnswered()
    {
        PlanDocument doc(Catalog::builtin());
        QVERIFY(doc.loadAsUntitled(QString::fromStdString(locateDataDir()) +
                                       QStringLiteral("/cases/hcie-ai-fsdp.plan.json"),
                                   nullptr));
        SearchPanel panel(&doc);
        panel.findLargestFit();
        const LargestFit f = largestFit(doc.plan(), doc.catalog());
        QVERIFY(f.seq_len >= doc.plan().training.seq_len);
        QVERIFY2(panel.fitText().contains(QString::fromStdString(formatCount(f.seq_len))),
                 qPrintable(panel.fitText()));
        QVERIFY(panel.fitText().contains(QString::fromStdString(formatCount(f.micro_batch))));
        Plan other = doc.plan();
        other.parallel.sharding = Sharding::None;
        QVERIFY(doc.apply(other, QStringLiteral("ddp")));
        QVERIFY(panel.fitText().isEmpty()); // the answer was for the other layout
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
