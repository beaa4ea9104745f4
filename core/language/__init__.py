"""Words: everything the core says, in the user's language, from the Fluent files in `core/locales/`.

words      `t`, `label`, `translate`; `note`, an assumption as a code with its English text
phrases    words for the pieces of an answer: sizes, settings, parse errors, what to show
cards      a GPU configuration: short name, count, price, verdict line
answer     the one `Answer` built from a `Result`, which every layout reads; its parts in
           answer_lead, answer_breakdown, answer_mitigations, answer_solve, answer_offload,
           answer_latency, answer_spec
prices     the price list of the offers
"""
