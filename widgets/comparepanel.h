#pragma once

#include <QWidget>
#include <functional>

class QComboBox;
class QLabel;
class QPushButton;
class QSplitter;
class QTableView;

namespace shardscope {

class ComparisonModel;
class MemoryChartView;
class PlanDocument;
struct PinnedPlan;

/// Up to ComparisonModel::kMaxPlans pinned plans side by side: the worst rank of each as a
/// stacked bar against its own capacity and usable lines, and a table of key figures with the
/// differences against a baseline plan. A comparison is saved and opened as a JSON file.
class ComparePanel final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ComparePanel)

public:
    /// What to do with the plans already pinned when more arrive (the cases, a file).
    enum class PinMode { Ask, Replace, Add };
    enum class Answer { Replace, Add, Cancel };

    explicit ComparePanel(PlanDocument *document, QWidget *parent = nullptr);
    ~ComparePanel() override;

    ComparisonModel *model() const { return m_model; }
    MemoryChartView *chartView() const { return m_chart; }
    QTableView *table() const { return m_table; }
    /// What the last action said (pinned, refused, a file's error).
    QString lastMessage() const { return m_message; }
    /// Replaces the question asked before pinned plans are replaced (tests, scripted runs); it
    /// receives the number pinned.
    void setReplacePrompt(std::function<Answer(int)> prompt);

    /// Writes the pinned plans to a comparison file.
    bool saveComparison(const QString &path);
    /// Pins the plans of a comparison file (asking first about the plans pinned already). A bad
    /// file is refused naming the field and the rule, and the pins stay as they were.
    bool openComparison(const QString &path, PinMode mode = PinMode::Ask);

public Q_SLOTS:
    /// Pins the document's current plan (refused when the comparison is full or holds it).
    bool pinCurrent();
    /// Pins the HCIE-AI case's layouts; returns how many were pinned (0 when cancelled).
    int pinCases(PinMode mode = PinMode::Ask);
    void unpinSelected();
    /// Makes a pinned plan the current plan (an undoable edit).
    void loadPinned(int row);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    /// Pins `plans` after the plans already pinned or instead of them; how many were pinned.
    int pinAll(const std::vector<PinnedPlan> &plans, PinMode mode, const QString &what);
    void refreshChart();
    void updateButtons();
    void updateBaselineChoices();
    void say(const QString &message, bool error = false);

    PlanDocument *m_document;
    ComparisonModel *m_model;
    QTableView *m_table;
    MemoryChartView *m_chart;
    QPushButton *m_pin;
    QPushButton *m_unpin;
    QPushButton *m_load;
    QPushButton *m_save;
    QComboBox *m_baseline;
    QLabel *m_status;
    QSplitter *m_splitter = nullptr;
    bool m_splitSet = false;
    QString m_message;
    std::function<Answer(int)> m_prompt;
};

} // namespace shardscope
