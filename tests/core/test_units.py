from core.units import GB, GiB, format_bytes, to_gb, to_gib


def test_gb_and_gib_differ_by_7_4_percent() -> None:
    assert GiB / GB == 1.073741824


def test_format_shows_decimal_and_binary_units() -> None:
    assert format_bytes(80 * GB) == "80.0 GB (74.5 GiB)"
    assert format_bytes(16 * GiB) == "17.2 GB (16.0 GiB)"


def test_format_small_sizes_in_megabytes() -> None:
    assert format_bytes(500 * 2**20) == "524 MB (500 MiB)"


def test_conversions() -> None:
    assert to_gb(3 * GB) == 3
    assert to_gib(GiB // 2) == 0.5
