# Text-to-speech models (issue 22 item 4): labels and notes of core/tts_defaults.py, core/formulas/tts.py.
component-tts_state = speech generation: the largest stage's cache or working set
assumption-tts_stages = Stages run one after another, all loaded at once; sized at each stage's full context ({ $stages }), { $texts } { $texts ->
    [one] text
   *[other] texts
} at a time.
