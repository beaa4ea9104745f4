"""GPU memory estimator: how much video memory a model needs, whether it fits, what to rent.

Pure library: plain functions over pydantic models and data files. Public entry points:
`core.sizing.estimate.estimate(request) -> Result` and `core.parse.parse(text) -> Request`.
"""
