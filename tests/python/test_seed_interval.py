"""scripts/seed_interval.py's Student t quantiles against published table values (any statistics
table: 0.975, 0.99 and 0.995 quantiles) and df = 2's closed form t = (2p-1)·sqrt(2 / (1 - (2p-1)^2)),
which the findings' Bonferroni intervals over three seeds use."""
import math
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))
from seed_interval import T975, bonferroni_half_width, half_width, t_quantile  # noqa: E402


@pytest.mark.parametrize("p, df, table", [(0.975, 1, 12.706), (0.975, 4, 2.776), (0.99, 2, 6.965),
                                          (0.995, 2, 9.925), (0.995, 9, 3.250), (0.99, 10, 2.764)])
def test_quantiles_match_the_tables(p, df, table):
    assert t_quantile(p, df) == pytest.approx(table, abs=6e-4)


@pytest.mark.parametrize("comparisons", [2, 3, 7])
def test_df_two_matches_its_closed_form(comparisons):
    q = 2 * (1 - 0.025 / comparisons) - 1
    assert t_quantile(1 - 0.025 / comparisons, 2) == pytest.approx(q * math.sqrt(2 / (1 - q * q)), rel=1e-6)


def test_one_comparison_is_the_95_percent_interval():
    values = [-0.0503, -0.0605, -0.0612]
    assert bonferroni_half_width(values, 1) == pytest.approx(half_width(values), rel=1e-4)
    assert T975[2] == pytest.approx(t_quantile(0.975, 2), abs=5e-4)
