#include "runnerpanel.h"

#include "filewrite.h"

#include "core/files.h"

#include "core/catalog.h"
#include "core/estimate.h"
#include "core/units.h"
#include "core/workload.h"
#include "runner/benchmarkrunner.h"
#include "runner/importers.h"
#include "runnerresultsmodel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace shardscope {

RunnerPanel::RunnerPanel(QWidget *parent)
    : QWidget(parent), m_runner(new BenchmarkRunner(this)), m_model(new RunnerResultsModel(this))
{
    m_backend = new QComboBox(this);
    m_backend->addItem(tr("Native CPU (OpenBLAS)"), QStringLiteral("cpu"));
    m_backend->addItem(tr("PyTorch worker"), QStringLiteral("torch"));
    m_device = new QComboBox(this);
    m_device->addItem(QStringLiteral("cpu"));
    m_device->addItem(QStringLiteral("cuda"));
    m_device->addItem(QStringLiteral("npu"));
    m_python = new QLineEdit(QStringLiteral("/usr/bin/python3"), this);
    m_python->setToolTip(tr("Python interpreter that runs the PyTorch worker"));
    m_nproc = new QSpinBox(this);
    m_nproc->setRange(1, 64);
    m_nproc->setToolTip(tr("Worker processes on this node; two or more measure collectives"));
    m_maxTokens = new QSpinBox(this);
    m_maxTokens->setRange(0, 1 << 20);
    m_maxTokens->setSingleStep(256);
    m_maxTokens->setSpecialValueText(tr("plan's"));
    m_maxTokens->setValue(256);
    m_maxTokens->setToolTip(tr("Tokens per kernel (0: the plan's); times are extrapolated"));
    m_probe = new QCheckBox(tr("Memory probe"), this);
    m_probe->setChecked(true);

    auto *form = new QFormLayout;
    auto *row1 = new QHBoxLayout;
    row1->addWidget(m_backend, 1);
    row1->addWidget(new QLabel(tr("Device:"), this));
    row1->addWidget(m_device);
    row1->addWidget(new QLabel(tr("Processes:"), this));
    row1->addWidget(m_nproc);
    form->addRow(tr("Backend:"), row1);
    auto *row2 = new QHBoxLayout;
    row2->addWidget(m_python, 1);
    row2->addWidget(new QLabel(tr("Token cap:"), this));
    row2->addWidget(m_maxTokens);
    row2->addWidget(m_probe);
    form->addRow(tr("Python:"), row2);

    m_runButton = new QPushButton(tr("Run"), this);
    m_cancelButton = new QPushButton(tr("Cancel"), this);
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    auto *runRow = new QHBoxLayout;
    runRow->addWidget(m_runButton);
    runRow->addWidget(m_cancelButton);
    runRow->addWidget(m_progress, 1);

    m_status = new QLabel(tr("Not run yet."), this);
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_memory = new QLabel(this);
    m_memory->setWordWrap(true);
    // Said before the table: a ratio of thousands is the CPU against a 910B, not an error.
    m_deviceNote = new QLabel(this);
    m_deviceNote->setObjectName(QStringLiteral("deviceNote"));
    m_deviceNote->setWordWrap(true);
    m_deviceNote->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_deviceNote->setStyleSheet(QStringLiteral(
        "QLabel { border-left: 4px solid #d08c00; padding: 3px 6px; background: palette(alternate-base); }"));
    m_deviceNote->hide();

    m_table = new QTableView(this);
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    // Each column as wide as its contents and header (the predicted device's name among them);
    // the kernel names take what is left.
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(RunnerResultsModel::Name, QHeaderView::Stretch);
    m_table->horizontalHeader()->setStretchLastSection(false);
    m_table->verticalHeader()->hide();
    m_log = new QPlainTextEdit(this);
    m_log->setReadOnly(true);
    m_log->setMaximumBlockCount(2000);
    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_table);
    split->addWidget(m_log);
    split->setStretchFactor(0, 4);
    split->setStretchFactor(1, 1);

    m_saveProfile = new QPushButton(tr("Save device profile..."), this);
    m_saveResults = new QPushButton(tr("Save results..."), this);
    m_import = new QPushButton(tr("Import..."), this);
    m_import->setToolTip(tr("nccl-tests or hccl_test output, or a PyTorch / torch_npu profiler "
                            "trace (Chrome JSON)"));
    auto *saveRow = new QHBoxLayout;
    saveRow->addWidget(m_import);
    saveRow->addStretch(1);
    saveRow->addWidget(m_saveResults);
    saveRow->addWidget(m_saveProfile);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addLayout(runRow);
    layout->addWidget(m_status);
    layout->addWidget(m_deviceNote);
    layout->addWidget(split, 1);
    layout->addWidget(m_memory);
    layout->addLayout(saveRow);

    connect(m_runButton, &QPushButton::clicked, this, &RunnerPanel::run);
    connect(m_cancelButton, &QPushButton::clicked, this, &RunnerPanel::cancel);
    connect(m_saveProfile, &QPushButton::clicked, this, &RunnerPanel::saveProfile);
    connect(m_saveResults, &QPushButton::clicked, this, &RunnerPanel::saveResults);
    connect(m_import, &QPushButton::clicked, this, &RunnerPanel::importFile);
    connect(m_backend, &QComboBox::currentIndexChanged, this, &RunnerPanel::updateButtons);
    connect(m_runner, &BenchmarkRunner::started, this, &RunnerPanel::onStarted);
    connect(m_runner, &BenchmarkRunner::progress, this, &RunnerPanel::onProgress);
    connect(m_runner, &BenchmarkRunner::kernelMeasured, this, &RunnerPanel::onKernel);
    connect(m_runner, &BenchmarkRunner::probeMeasured, this, &RunnerPanel::onProbe);
    connect(m_runner, &BenchmarkRunner::logLine, m_log, &QPlainTextEdit::appendPlainText);
    connect(m_runner, &BenchmarkRunner::finished, this, &RunnerPanel::onFinished);
    connect(m_runner, &BenchmarkRunner::failed, this, &RunnerPanel::onFailed);
    updateButtons();
}

RunnerPanel::~RunnerPanel() = default;

void RunnerPanel::setPlan(const Plan &plan)
{
    m_plan = std::make_unique<Plan>(plan);
    updateButtons();
}

RunOptions RunnerPanel::options() const
{
    RunOptions o;
    o.backend = m_backend->currentData().toString();
    o.device = o.backend == QLatin1String("cpu") ? QStringLiteral("cpu") : m_device->currentText();
    o.python = m_python->text();
    o.nproc = m_nproc->value();
    o.probe = m_probe->isChecked();
    return o;
}

void RunnerPanel::setOptions(const RunOptions &o)
{
    m_backend->setCurrentIndex(std::max(0, m_backend->findData(o.backend)));
    m_device->setCurrentIndex(std::max(0, m_device->findText(o.device)));
    m_python->setText(o.python);
    m_nproc->setValue(o.nproc);
    m_probe->setChecked(o.probe);
}

bool RunnerPanel::isRunning() const
{
    return m_runner->isRunning();
}

QString RunnerPanel::deviceNote() const
{
    return m_deviceNote->isHidden() ? QString() : m_deviceNote->text();
}

RunResults RunnerPanel::withDevice(RunResults results) const
{
    if (results.info.device.empty())
        results.info.device = m_runDevice; // a backend that did not say: the device asked for
    return results;
}

void RunnerPanel::updateDeviceNote()
{
    const QString note = m_model->crossDeviceNote();
    m_deviceNote->setText(note);
    m_deviceNote->setVisible(!note.isEmpty());
}

QString RunnerPanel::remainingText(qint64 elapsedMs, int done, int total)
{
    if (done <= 0 || done >= total || elapsedMs < 0)
        return {};
    // The items done so far set the pace; the kernels differ, so it is an estimate.
    const qint64 left = (elapsedMs * (total - done) / done + 999) / 1000; // seconds, rounded up
    QString time;
    if (left < 60)
        time = tr("%1 s").arg(std::max<qint64>(1, left));
    else if (left < 3600)
        time = tr("%1 min %2 s").arg(left / 60).arg(left % 60);
    else
        time = tr("%1 h %2 min").arg(left / 3600).arg((left % 3600) / 60);
    return tr("about %1 left").arg(time);
}

void RunnerPanel::updateButtons()
{
    const bool running = m_runner->isRunning();
    const bool torch = m_backend->currentData().toString() == QLatin1String("torch");
    m_runButton->setEnabled(!running && m_plan);
    m_cancelButton->setEnabled(running);
    m_device->setEnabled(torch && !running);
    m_python->setEnabled(torch && !running);
    m_nproc->setEnabled(torch && !running);
    m_backend->setEnabled(!running);
    const bool have = !m_model->results().kernels.empty() && !running;
    m_saveProfile->setEnabled(have && m_runPlan);
    m_saveResults->setEnabled(have && m_runPlan);
    m_import->setEnabled(m_plan != nullptr);
}

void RunnerPanel::run()
{
    if (!m_plan || m_runner->isRunning())
        return;
    const RunOptions o = options();
    const bool onCpu = o.device == QLatin1String("cpu");
    WorkloadOptions wo;
    wo.max_tokens = m_maxTokens->value() > 0 ? m_maxTokens->value() : (onCpu ? 256 : 0);
    wo.probe_max_tokens = onCpu ? 256 : 0;
    m_runPlan = std::make_unique<Plan>(*m_plan);
    Workload w;
    try {
        w = buildWorkload(*m_runPlan, wo, &Catalog::builtin());
    } catch (const std::exception &e) {
        onFailed(QString::fromUtf8(e.what()));
        return;
    }
    RunResults empty;
    empty.kernels = w.kernels;
    empty.probe = w.probe;
    // Where the kernels run is known now: the table says so before the first result.
    m_runDevice = o.device.toStdString();
    empty.info.backend = o.backend.toStdString();
    empty.info.device = m_runDevice;
    m_model->setResults(empty, Catalog::builtin().device(m_runPlan->cluster.device),
                        m_runPlan.get());
    updateDeviceNote();
    m_clock.start();
    m_memory->clear();
    m_log->clear();
    m_progress->setRange(0, std::max(1, int(w.kernels.size()) + (o.probe ? 1 : 0)));
    m_progress->setValue(0);
    m_status->setText(tr("Starting the %1 backend...").arg(o.backend));
    if (!m_runner->start(*m_runPlan, w, o))
        onFailed(m_runner->lastError());
    updateButtons();
}

void RunnerPanel::cancel()
{
    m_runner->stop();
}

void RunnerPanel::onStarted(const QString &description)
{
    m_status->setText(tr("Running on %1").arg(description));
}

void RunnerPanel::onProgress(int done, int total, const QString &current)
{
    QString format = QStringLiteral("%v / %m");
    if (!current.isEmpty())
        format += QStringLiteral("  ") + current;
    const QString left = remainingText(m_clock.isValid() ? m_clock.elapsed() : -1, done, total);
    if (!left.isEmpty())
        format += QStringLiteral(" \u00b7 ") + left;
    m_progress->setFormat(format);
    m_progress->setRange(0, std::max(1, total));
    m_progress->setValue(done);
}

void RunnerPanel::onKernel(int index)
{
    const RunResults &r = m_runner->results();
    if (index >= 0 && size_t(index) < r.measurements.size())
        m_model->updateKernel(index, r.measurements[size_t(index)]);
}

void RunnerPanel::onProbe()
{
    showMemory();
}

void RunnerPanel::showMemory()
{
    const RunResults &r = m_runner->results();
    const ProbeMeasurement &p = r.probe_result;
    if (p.status.empty()) {
        m_memory->clear();
        return;
    }
    if (!p.ran()) {
        m_memory->setText(
            tr("Memory probe %1: %2")
                .arg(QString::fromStdString(p.status), QString::fromStdString(p.message)));
        return;
    }
    const MemoryComparison mc = compareProbe(*m_runPlan, r, Catalog::builtin());
    m_memory->setText(tr("Memory probe: %1 layers, %2 tokens, %3, %4 attention. Peak allocated: "
                         "predicted %5, measured %6 (%7x).")
                          .arg(p.layers)
                          .arg(p.seq_len * p.micro_batch)
                          .arg(QString::fromStdString(p.mode), QString::fromStdString(p.attention),
                               QString::fromStdString(formatGiB(mc.predicted_peak)),
                               QString::fromStdString(formatGiB(mc.measured_peak)))
                          .arg(mc.ratio, 0, 'f', 3));
}

void RunnerPanel::adoptResults(const RunnerPanel &other)
{
    if (!other.m_runPlan || other.m_runner->isRunning() || isRunning() ||
        other.m_runner->results().kernels.empty())
        return;
    if (!m_runner->adoptResults(other.m_runner->results()))
        return;
    m_runPlan = std::make_unique<Plan>(*other.m_runPlan);
    m_model->setResults(withDevice(m_runner->results()),
                        Catalog::builtin().device(m_runPlan->cluster.device), m_runPlan.get());
    updateDeviceNote();
    showMemory();
    updateButtons();
}

void RunnerPanel::onFinished()
{
    m_model->setResults(withDevice(m_runner->results()),
                        Catalog::builtin().device(m_runPlan->cluster.device), m_runPlan.get());
    updateDeviceNote();
    showMemory();
    m_status->setText(m_status->text() + tr(" - finished."));
    m_progress->setFormat(QStringLiteral("%v / %m"));
    updateButtons();
    emit runFinished();
}

void RunnerPanel::onFailed(const QString &error)
{
    if (m_runPlan)
        m_model->setResults(withDevice(m_runner->results()),
                            Catalog::builtin().device(m_runPlan->cluster.device), m_runPlan.get());
    updateDeviceNote();
    showMemory();
    m_status->setText(error == QLatin1String("cancelled")
                          ? tr("Cancelled; the kernels measured so far are kept.")
                          : tr("Stopped: %1 (the kernels measured so far are kept)").arg(error));
    m_progress->setFormat(QStringLiteral("%v / %m"));
    updateButtons();
    emit runFailed(error);
}

nlohmann::json RunnerPanel::calibratedProfile() const
{
    if (!m_runPlan)
        return {};
    const DeviceProfile *d = Catalog::builtin().device(m_runPlan->cluster.device);
    if (!d)
        return {};
    return deviceToJson(calibrateDevice(*d, m_runner->results()));
}

void RunnerPanel::saveProfile()
{
    const QString path = QFileDialog::getSaveFileName(this, tr("Save device profile"), {},
                                                      tr("Device profile (*.json)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!writeFileSafely(path, QByteArray::fromStdString(calibratedProfile().dump(2) + "\n"), &error))
        m_status->setText(error);
}

void RunnerPanel::saveResults()
{
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Save results"), {}, tr("Results (*.json)"));
    if (path.isEmpty() || !m_runPlan)
        return;
    QString error;
    const std::string text =
        resultsToJson(*m_runPlan, m_runner->results(), Catalog::builtin()).dump(2) + "\n";
    if (!writeFileSafely(path, QByteArray::fromStdString(text), &error))
        m_status->setText(error);
}

void RunnerPanel::importFile()
{
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Import measurements"), {},
        tr("Benchmark output or trace (*.txt *.log *.json);;All files (*)"));
    if (path.isEmpty() || !m_plan)
        return;
    try {
        // The same size cap and the same choice of reader as bench --import.
        const std::string text = readTextFile(path.toStdString(), kMaxTraceFileBytes);
        const Estimate e = estimate(*m_plan, Catalog::builtin());
        if (looksLikeChromeTrace(text)) {
            const TraceImport t = parseChromeTrace(text);
            m_log->appendPlainText(
                tr("Trace %1: %2 events, peak allocated %3 (plan: %4)")
                    .arg(path)
                    .arg(t.events)
                    .arg(QString::fromStdString(formatGiB(t.peak_allocated)),
                         QString::fromStdString(formatGiB(e.memory.peak_bytes))));
            for (const TraceCollective &c : t.collectives) {
                double plan = 0;
                for (const Collective &pc : e.communication)
                    if (pc.collective == c.collective)
                        plan += pc.time_s * pc.count_per_step;
                m_log->appendPlainText(tr("  %1: %2 calls, %3 in the trace; plan per step %4")
                                           .arg(QString::fromStdString(c.collective))
                                           .arg(c.calls)
                                           .arg(QString::fromStdString(formatSeconds(c.total_s)),
                                                QString::fromStdString(formatSeconds(plan))));
            }
        } else {
            const CollectiveImport c = parseCollectiveBenchmark(text, path.toStdString(), 0);
            m_log->appendPlainText(tr("%1 output %2: %3 sizes")
                                       .arg(QString::fromStdString(c.tool), path)
                                       .arg(c.points.size()));
            for (const CollectivePoint &p : c.points)
                m_log->appendPlainText(tr("  %1 %2: %3, busbw %4 GB/s")
                                           .arg(QString::fromStdString(p.collective),
                                                QString::fromStdString(formatBytes(p.bytes)),
                                                QString::fromStdString(formatSeconds(p.time_s)))
                                           .arg(p.busbw / 1e9, 0, 'f', 1));
        }
    } catch (const std::exception &ex) {
        m_log->appendPlainText(tr("Cannot import %1: %2").arg(path, QString::fromUtf8(ex.what())));
    }
}

} // namespace shardscope
