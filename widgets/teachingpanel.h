#pragma once

#include "teaching/lesson.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QTextBrowser;

namespace shardscope {

class PlanDocument;

/// Teaching mode: the HCIE-AI walkthrough step by step. Choosing a step or an exercise puts
/// its plan in the document (one undoable edit) and shows the text with the engine's numbers
/// and their formulas; exercises are answered here and checked by the engine.
class TeachingPanel final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(TeachingPanel)

public:
    explicit TeachingPanel(PlanDocument *document, QWidget *parent = nullptr);
    ~TeachingPanel() override;

    /// The panel's (dock's) title, translated.
    static QString title();

    const Lesson &lesson() const { return m_lesson; }
    /// Steps first, then exercises.
    int itemCount() const;
    int currentItem() const { return m_current; }
    /// Shows item `index` and sets its plan in the document.
    void showItem(int index);
    /// Checks an answer to the current exercise and shows the engine's feedback.
    ExerciseCheck checkAnswer(const QString &answer);
    /// The text shown now (plain).
    QString currentText() const;

protected:
    void changeEvent(QEvent *event) override;

private:
    void reload();
    void retranslate();
    void render();
    void fillList();

    PlanDocument *m_document;
    Lesson m_lesson;
    QString m_loadError;
    int m_current = -1;
    QLabel *m_title;
    QListWidget *m_list;
    QTextBrowser *m_text;
    QPushButton *m_previous;
    QPushButton *m_next;
    QWidget *m_answerRow;
    QComboBox *m_choices;
    QLineEdit *m_answer;
    QPushButton *m_check;
    QLabel *m_feedback;
};

} // namespace shardscope
