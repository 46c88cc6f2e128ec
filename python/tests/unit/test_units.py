import pytest

from nicbench.units import UnitError, parse_count, parse_duration_ns, parse_rate, parse_size_bytes


@pytest.mark.parametrize(
    "text,value,unit",
    [
        ("100Gbps", 100e9, "bps"),
        ("25 Gbit/s", 25e9, "bps"),
        ("8Mpps", 8e6, "pps"),
        ("500kpps", 5e5, "pps"),
        ("1.5e6pps", 1.5e6, "pps"),
        ("3.5Gbps", 3.5e9, "bps"),
        # Spellings people type: any case, a bare prefix as in "10G Ethernet".
        ("10gbps", 10e9, "bps"),
        ("10G", 10e9, "bps"),
        ("40 GBIT/S".lower(), 40e9, "bps"),
        ("2MPPS", 2e6, "pps"),
    ],
)
def test_parse_rate(text, value, unit):
    rate = parse_rate(text)
    assert rate.value == pytest.approx(value)
    assert rate.unit == unit


@pytest.mark.parametrize("text", ["100", "Gbps", "100Gbs", "-1Gbps", "0Gbps", "fast", "1e400Gbps", "10GB/s"])
def test_parse_rate_rejects(text):
    with pytest.raises(UnitError, match="expected|> 0|bytes"):
        parse_rate(text)


@pytest.mark.parametrize(
    "text,ns",
    [("1s", 10**9), ("500ms", 5 * 10**8), ("20us", 20_000), ("100ns", 100), ("2min", 120 * 10**9), ("0.5s", 5 * 10**8)],
)
def test_parse_duration(text, ns):
    assert parse_duration_ns(text) == ns


@pytest.mark.parametrize("text", ["1", "1sec", "ms", "-1s"])
def test_parse_duration_rejects(text):
    with pytest.raises(UnitError):
        parse_duration_ns(text)


@pytest.mark.parametrize("text,n", [("1500B", 1500), ("64KiB", 65536), ("1MB", 10**6), ("1500", 1500), (9000, 9000)])
def test_parse_size(text, n):
    assert parse_size_bytes(text) == n


def test_parse_size_rejects_fractions():
    with pytest.raises(UnitError, match="whole"):
        parse_size_bytes("1.5B")


@pytest.mark.parametrize(
    "text,n",
    [
        ("10000", 10000),
        ("10k", 10000),
        ("1M", 10**6),
        ("2.5M", 2_500_000),
        ("16Ki", 16_384),
        ("1Mi", 1_048_576),
        ("16K", 16_000),
    ],
)
def test_parse_count(text, n):
    assert parse_count(text) == n


def test_parse_count_rejects():
    with pytest.raises(UnitError):
        parse_count("1.5")


@pytest.mark.parametrize(
    "value,text",
    [
        (32895, "32,895"),
        (103_500.0, "103,500"),
        (12.345, "12.35"),
        (0.00392, "0.00392"),
        (-0.0, "0"),
        (1e-5, "1.000e-05"),
        (1_234_567.8, "1,234,568"),
        (float("nan"), "–"),
        (None, "–"),
    ],
)
def test_numbers_are_formatted_for_people(value, text):
    from nicbench.cli.common import fmt_number

    assert fmt_number(value) == text


# Numbers that overflow a float (1e400 → inf) are refused, not passed on as inf (issue 17).
@pytest.mark.parametrize(
    ("parse", "text"),
    [(parse_rate, "1e400Gbps"), (parse_duration_ns, "1e400s"), (parse_size_bytes, "1e400B"), (parse_count, "1e400")],
)
def test_overflowing_numbers_refused(parse, text):
    with pytest.raises(UnitError, match="finite|whole"):
        parse(text)


def test_parse_count_cap_names_the_option_and_the_cap():
    assert parse_count("4k", at_most=4000) == 4000
    with pytest.raises(UnitError, match=r"^--flows: 1e20 is too large: at most 4,294,967,295$"):
        parse_count("1e20", at_most=2**32 - 1, what="--flows")


def test_a_zero_duration_is_refused_unless_allowed():
    for zero in ("0", "0s", " 0ms ", "0.0us", "00min"):
        assert parse_duration_ns(zero, allow_zero=True) == 0
    assert parse_duration_ns("20us", allow_zero=True) == 20_000
    for bad in ("0ms", "0s"):
        with pytest.raises(UnitError, match="positive"):
            parse_duration_ns(bad, "--warmup")
    with pytest.raises(UnitError, match="expected a duration"):
        parse_duration_ns("0 parsecs", allow_zero=True)


def test_binary_sizes_read_in_kib_and_mib():
    """Payloads swept in powers of two are binary sizes: 1,024 B is 1 KiB, never "1.024 kB"; a size
    that is no whole number of quarters of a binary unit stays in bytes."""
    from nicbench.units import format_size_bytes, is_binary_size

    shown = {n: format_size_bytes(n) for n in (64, 1024, 1536, 4096, 262_144, 16 * 1024**2, 3 * 1024**3, 1500)}
    assert shown == {
        64: "64 B",
        1024: "1 KiB",
        1536: "1.5 KiB",
        4096: "4 KiB",
        262_144: "256 KiB",
        16 * 1024**2: "16 MiB",
        3 * 1024**3: "3 GiB",
        1500: "1,500 B",
    }
    assert [is_binary_size(n) for n in (64, 1024, 4096, 1280, 1500, 1518, 0, -1024, 1.5)] == [
        True,
        True,
        True,
        False,
        False,
        False,
        False,
        False,
        False,
    ]
    import numpy as np

    assert is_binary_size(np.int64(262_144)) and format_size_bytes(np.int64(4096)) == "4 KiB"  # a frame's values
