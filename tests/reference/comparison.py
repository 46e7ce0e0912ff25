"""How the PyTorch reference scripts compare a tensor of the engine's with their own: norm-wise
relative error in double, one labelled line per quantity, and the worst error overall."""


def relative_error(got, want):
    return (got.double() - want.double()).norm().item() / max(want.double().norm().item(), 1e-30)


def report(checks, tolerance, label_width, prefix=""):
    """Prints each (name, got, want) with its relative error and returns the worst error."""
    worst = 0.0
    for name, got, want in checks:
        error = relative_error(got, want)
        worst = max(worst, error)
        status = "ok" if error <= tolerance else "MISMATCH"
        print(f"{status:8s} {prefix}{name:{label_width}s} relative error {error:.3e}")
    return worst
