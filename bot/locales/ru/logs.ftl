# Присланный лог (bot/handlers/pasted_logs.py) и /measurements
log-store-offer = <i>Можно сохранить эти цифры (без текста лога) для калибровки расчётов — только если вы согласны.</i>
log-store-button = 💾 Сохранить измерение
log-stored = Измерение #{ $id } сохранено. Спасибо!
log-store-expired = Нечего сохранять: пришлите лог ещё раз.
cmd-measurements = Измерения из логов; /measurements export
admin-measurements-none = Сохранённых измерений пока нет.
admin-measurements-title = Измерения из логов: { $count }. Последние:
admin-measurements-row = #{ $id } · { $created } · { $kind } · { $gpu } · { $model } · нужно { $need }
admin-measurements-usage = /measurements — последние измерения; /measurements export — все в CSV.
