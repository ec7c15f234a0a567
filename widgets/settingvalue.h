#pragma once

#include <QSettings>
#include <QString>
#include <QVariant>

namespace shardscope {

/// A typed key over the application's one QSettings store.
template <typename T>
class SettingValue
{
public:
    explicit SettingValue(QString key, T defaultValue = T{})
        : m_key(std::move(key)), m_default(std::move(defaultValue))
    {
    }

    T get() const
    {
        const QSettings settings;
        const QVariant v = settings.value(m_key);
        return v.isValid() && v.canConvert<T>() ? v.value<T>() : m_default;
    }
    /// Stores the value; false when the store could not be written (a full disk), in which
    /// case the previous settings file is left as it was.
    bool set(const T &value) const
    {
        QSettings settings;
        settings.setValue(m_key, QVariant::fromValue(value));
        settings.sync();
        return settings.status() == QSettings::NoError;
    }
    void remove() const
    {
        QSettings settings;
        settings.remove(m_key);
    }
    const QString &key() const { return m_key; }

private:
    QString m_key;
    T m_default;
};

} // namespace shardscope
