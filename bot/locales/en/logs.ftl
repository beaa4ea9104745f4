# A pasted log (bot/handlers/pasted_logs.py) and /measurements
log-store-offer = <i>These numbers (not the log's text) can be stored to calibrate the estimates — only if you agree.</i>
log-store-button = 💾 Store the measurement
log-stored = Measurement #{ $id } stored. Thank you!
log-store-expired = Nothing to store: paste the log again.
cmd-measurements = Measurements from logs; /measurements export
admin-measurements-none = No measurements stored yet.
admin-measurements-title = Measurements from logs: { $count }. The newest:
admin-measurements-row = #{ $id } · { $created } · { $kind } · { $gpu } · { $model } · needs { $need }
admin-measurements-usage = /measurements — the newest measurements; /measurements export — all of them as CSV.
