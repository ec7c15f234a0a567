#pragma once

#include "core/snapshot.h"
#include "core/stepview.h"
#include "report/stepseries.h"

#include <QPointer>
#include <QRectF>
#include <QString>
#include <QStringList>
#include <QWidget>
#include <array>
#include <memory>
#include <vector>

class QComboBox;
class QPushButton;
class QLabel;
class QSplitter;
class QTreeWidget;

namespace shardscope {

class PlanDocument;

/// The steady training step of one kind of rank over its allocation events: the allocated
/// bytes stacked by component, the caching allocator's reserved bytes as a line above them, the
/// forward, backward and optimizer-step phases as bands, the allocated peak, and the HBM capacity
/// and usable lines of the per-rank chart. Drawn with QPainter from a StepView (core/stepview.h);
/// with more events than pixel columns each column draws the lowest and the highest value of its
/// events, so that no peak is lost.
class MemoryTimelineView final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(MemoryTimelineView)

public:
    explicit MemoryTimelineView(QWidget *parent = nullptr);
    ~MemoryTimelineView() override;

    /// Shows `view` against the device's `hbmBytes` and `usableBytes` (HBM minus the largest
    /// runtime reserve, the per-rank chart's dashed line). A null view clears the chart.
    void setStepView(std::shared_ptr<const StepView> view, double hbmBytes, double usableBytes);
    /// A measured snapshot drawn over the prediction: each entry's position on the step's axis
    /// (relative events, from alignToStep; negative: not in the step), its allocated and
    /// reserved bytes. Empty `x` removes it.
    struct Measured
    {
        QString source;
        std::vector<double> x, allocated, reserved;
        double peakAllocated = 0, peakReserved = 0; ///< within the step
    };
    void setMeasured(Measured measured);
    /// The engine's formula of each component at each phase (explainMemory, translated), for
    /// the hover text of a tensor of that component.
    using Formulas = std::array<std::array<QString, kComponentCount>, kPhaseCount>;
    void setFormulas(Formulas formulas) { m_formulas = std::move(formulas); }
    const Measured &measured() const { return m_measured; }
    const StepView *stepView() const { return m_view.get(); }

    // Read access for tests.
    int eventCount() const; ///< steady events drawn (0 .. n-1 on the x axis)
    /// The allocated peak marked on the chart, bytes, and its event (relative to the step).
    double peakBytes() const { return m_view ? m_view->allocated_peak : 0; }
    int peakEvent() const;
    QString peakLabel() const;
    /// The series as drawn at the current width (event indices relative to the step).
    const std::vector<StepSample> &liveSamples() const;
    const std::vector<StepSample> &reservedSamples() const;
    /// Largest drawn value of the allocated total and of the reserved line, bytes.
    double drawnLiveMax() const;
    double drawnReservedMax() const;
    /// Top of each component's band after steady event `event`, bytes (stacked, bottom first).
    double stackedTop(int component, int event) const;
    double reservedAt(int event) const;
    /// Names of the phase bands, left to right.
    QStringList phaseLabels() const;
    /// The plot area, in widget coordinates.
    QRectF plotRect() const { return m_plot; }
    /// The steady event (relative) drawn under `pos`, -1 outside the plot.
    int eventAt(const QPoint &pos) const;
    /// Where event `event`'s sample is drawn (x in the middle of its step, y on its top).
    QPoint pointOf(int event) const;
    /// The hover text of event `event` (relative), rich text.
    QString eventTooltip(int event) const;
    QSize sizeHint() const override { return {640, 360}; }
    QSize minimumSizeHint() const override { return {320, 220}; }

protected:
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void leaveEvent(QEvent *event) override;
    void changeEvent(QEvent *event) override;
    bool event(QEvent *event) override;

private:
    struct LegendItem
    {
        QString text;
        int kind; ///< a Component, or -1 for the reserved line
    };
    void layoutChart();
    void ensureSamples();
    std::vector<LegendItem> legendItems() const;
    double xOf(double eventUnits) const;
    double yOf(double bytes) const;
    int sampleIndexAt(double eventUnits) const;
    int relativePhase(int event) const; ///< index into m_view->phases of an event, -1 for none
    void drawLegend(QPainter &p, const std::vector<LegendItem> &items, double y);

    std::shared_ptr<const StepView> m_view;
    double m_hbm = 0, m_usable = 0;
    double m_top = 1;      ///< top of the value axis, bytes
    double m_step = 1;     ///< between the value axis's ticks, bytes
    QRectF m_plot;
    double m_legendHeight = 0;
    int m_sampledColumns = -1; ///< the columns m_live and m_reserved were sampled for
    std::vector<StepSample> m_live, m_reserved;
    std::vector<bool> m_present; ///< components with bytes anywhere in the step
    Measured m_measured;
    Formulas m_formulas;
    int m_hovered = -1;          ///< relative event under the mouse
};

/// The "Memory over the step" page: which kind of rank (a stage selector when the plan has
/// several pipeline stages; by default the rank that needs the most), what its steady step
/// looks like, and what drives its peak: the tensors alive there, largest first.
class MemoryTimelinePanel final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(MemoryTimelinePanel)

public:
    /// Rows of the peak list before the remainder is summed up in one row.
    static constexpr int kDriverRows = 12;

    explicit MemoryTimelinePanel(PlanDocument *document, QWidget *parent = nullptr);
    ~MemoryTimelinePanel() override;

    static QString title();

    MemoryTimelineView *view() const { return m_chart; }
    QComboBox *stageBox() const { return m_stages; }
    QTreeWidget *driverList() const { return m_drivers; }
    /// The stage shown; -1 before the first refresh.
    int stage() const { return m_stage; }
    /// Shows `stage` (kept across plan changes while the plan has it).
    void setStage(int stage);
    /// The groups of the peak list (all of them; the list shows the first kDriverRows).
    const std::vector<PeakGroup> &drivers() const { return m_groups; }
    QString headline() const;
    /// Overlays a measured snapshot (JSON, or a torch pickle converted by the worker); false
    /// with the reason in `error` when it cannot be read.
    bool importSnapshot(const QString &path, QString *error);
    void clearSnapshot();
    bool hasSnapshot() const { return m_snapshot != nullptr; }

public Q_SLOTS:
    /// Recomputes the step view of the current plan (done on plan changes while shown).
    void refresh();

protected:
    void showEvent(QShowEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    void planChanged();
    void updateStages();
    void fillDrivers();

    PlanDocument *m_document;
    QLabel *m_headline;
    QComboBox *m_stages;
    QLabel *m_stageLabel;
    QSplitter *m_splitter;
    QWidget *m_side;
    MemoryTimelineView *m_chart;
    QLabel *m_driversCaption;
    QTreeWidget *m_drivers;
    QPushButton *m_import;
    std::shared_ptr<const StepView> m_view;
    std::shared_ptr<const MeasuredMemory> m_snapshot; ///< the imported measurement, if any
    void applySnapshot();
    std::vector<PeakGroup> m_groups;
    int m_stage = -1;
    int m_chosen = -1;   ///< the stage the user picked, -1 for the default
    bool m_dirty = true; ///< the plan changed while hidden
    bool m_updatingStages = false;
};

} // namespace shardscope
