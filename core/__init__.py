"""GPU memory estimator: how much video memory a model needs, whether it fits, what to rent.

Pure library: plain functions over pydantic models and data files. Public entry points:
`core.sizing.estimate.estimate(request) -> Result` and `core.parse.parse(text) -> Request`; the JSON
contract is `core.contract`. Rooms: contract, catalogue (data files), model (name → spec), formulas,
sizing, advice, inverse, parse, language (words, the `Answer`), layouts, logs; each package's
docstring lists its modules. No module imports one that imports it back (tests/core/test_import_graph.py).
"""
