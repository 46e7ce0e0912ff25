"""The 95% interval of a mean over seeds (Student t), for the scripts that print the docs' tables."""
import math
import statistics

# Student t's 0.975 quantile by degrees of freedom (any statistics table).
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228}


def half_width(values):
    """Half-width of the 95% interval of the mean of two or more values."""
    return T975[len(values) - 1] * statistics.stdev(values) / math.sqrt(len(values))
