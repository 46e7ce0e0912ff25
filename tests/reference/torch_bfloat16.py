"""Rounds float32 values to bfloat16 with PyTorch, for the bf16 preset's test.

Usage: torch_bfloat16.py IN OUT -- IN holds raw little-endian float32 values; OUT receives the same
values after torch's float32 -> bfloat16 -> float32 conversion.
"""
import sys

import numpy
import torch


def main(source, target):
    values = torch.from_numpy(numpy.fromfile(source, dtype="<f4"))
    rounded = values.to(torch.bfloat16).to(torch.float32)
    rounded.numpy().astype("<f4").tofile(target)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
