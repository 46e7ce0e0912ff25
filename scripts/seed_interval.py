"""The 95% interval of a mean over seeds (Student t), for the scripts that print the docs' tables,
and the wider interval of one of m comparisons under Bonferroni's correction."""
import math
import statistics

# Student t's 0.975 quantile by degrees of freedom (any statistics table).
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228}


def half_width(values):
    """Half-width of the 95% interval of the mean of two or more values."""
    return T975[len(values) - 1] * statistics.stdev(values) / math.sqrt(len(values))


def t_cdf(t, df):
    """Student t's CDF at t >= 0: 1/2 plus its density integrated from 0 (Simpson, 2,000 steps)."""
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    density = lambda x: c * (1 + x * x / df) ** (-(df + 1) / 2)
    n = 2000
    h = t / n
    inner = sum((4 if i % 2 else 2) * density(i * h) for i in range(1, n))
    return 0.5 + h / 3 * (density(0) + inner + density(t))


def t_quantile(p, df):
    """The t with t_cdf(t, df) = p, for p in (0.5, 1), by bisection."""
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_cdf(mid, df) < p else (lo, mid)
    return (lo + hi) / 2


def bonferroni_half_width(values, comparisons):
    """Half-width of the interval at 1 - 0.05/comparisons (each of `comparisons` at that level)."""
    df = len(values) - 1
    return t_quantile(1 - 0.025 / comparisons, df) * statistics.stdev(values) / math.sqrt(len(values))
