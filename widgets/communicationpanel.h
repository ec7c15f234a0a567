#pragma once

#include <QWidget>

class QLabel;
class QStackedWidget;
class QTableView;

namespace shardscope {

class RichTextLabel;

class CollectiveChartView;
class CommunicationModel;
class PlanDocument;

/// The step's collectives, their time, and the step-time breakdown with tokens/s and MFU.
class CommunicationPanel final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(CommunicationPanel)

public:
    explicit CommunicationPanel(PlanDocument *document, QWidget *parent = nullptr);
    ~CommunicationPanel() override;

    CommunicationModel *model() const { return m_model; }
    CollectiveChartView *chartView() const { return m_chart; }
    QTableView *tableView() const { return m_table; }
    QString summaryText() const;
    bool showsPlaceholder() const;

public Q_SLOTS:
    void refresh();

protected:
    void showEvent(QShowEvent *event) override;

private:
    PlanDocument *m_document;
    CommunicationModel *m_model;
    RichTextLabel *m_summary;
    QStackedWidget *m_stack;
    QLabel *m_placeholder;
    QTableView *m_table;
    CollectiveChartView *m_chart;
    bool m_stale = false;
    QString m_shownRows; ///< the collectives, groups and phases the columns were sized for
};

} // namespace shardscope
