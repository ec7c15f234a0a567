#pragma once

#include "teaching/lesson.h"

#include <QWidget>

class QButtonGroup;
class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSplitter;
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
    /// Shows a step or exercise without putting its plan in the workbench (the window rebuilt
    /// for another language returns to where the reader was, with the plan they have now).
    void setCurrentItem(int index);
    /// Checks an answer to the current exercise and shows the engine's feedback.
    ExerciseCheck checkAnswer(const QString &answer);
    /// The text shown now (plain).
    QString currentText() const;

protected:
    void changeEvent(QEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    void reload();
    void retranslate();
    void render();
    void fillList();
    /// Gives the step list the height its steps need, up to half the panel, the text the rest.
    void fitList();

    PlanDocument *m_document;
    Lesson m_lesson;
    QString m_loadError;
    int m_current = -1;
    QLabel *m_title;
    QListWidget *m_list;
    QTextBrowser *m_text;
    QSplitter *m_splitter = nullptr;
    bool m_listFitted = false; ///< once the user moved the splitter, it stays where they put it
    QPushButton *m_previous;
    QPushButton *m_next;
    QWidget *m_answerRow;
    QWidget *m_choices;          ///< the layouts (or yes / no) to choose from, one radio button each
    QButtonGroup *m_choiceGroup;
    QLineEdit *m_answer;
    QPushButton *m_check;
    QLabel *m_feedback;
};

} // namespace shardscope
