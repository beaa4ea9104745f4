"""An `Answer` laid out: plain text for the CLI (`plain`), the PNG card (`picture`: laid out by
`picture_layout`, drawn by `picture_drawing`), the launch commands as typed (`launch`). Layouts decide
nothing; they place what the `Answer` says.
"""
