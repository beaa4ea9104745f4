"""The catalogues of `core/data/`: GPUs, models and rental offers, validated at load.

load      reading a data file: its TOML, its rows validated, the cross-checks (`read_toml`, `load_rows`)
catalog   the `Catalog` and its queries (find, search, suggest); `load_catalog`, `default_catalog`
names     model names as people write them: normalised, variant words, fuzzy matching
sizes     model sizes as people write them ("7b", "8x7b", "405 млрд")
models    model rows (`ModelSpec`: architecture, pipeline, recurrent layers, vision tower)
gpus      GPU rows (`GpuSpec`)
offers    rental offers and the ranking policy (`RentalOffer`, `RankingPolicy`)
"""
