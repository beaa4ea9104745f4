"""One request sized: `estimate(request) -> Result`, the estimator's one entry point.

estimate     resolve, fill defaults, sum the formulas, advise, note what was assumed
defaults     the documented defaults (`fill_defaults`); defaults_training, defaults_multimodal
stack        models served beside the request's model (a RAG stack)
speculative  a draft model's share of the card and the speed-up
notes        which notices apply, by method (hybrid: the recurrent state's note)
accuracy     the measured accuracy per workload class: the answer's range (accuracy_multimodal)
memo         estimates and answers remembered, for a process answering many users
"""
