"""The package under test is the one built in ALTGRAD_BUILD_DIR (default: the repository's build/),
beside the command line it is checked against."""
import os
import pathlib
import sys

import pytest

BUILD = pathlib.Path(os.environ.get("ALTGRAD_BUILD_DIR", pathlib.Path(__file__).resolve().parents[2] / "build"))
sys.path.insert(0, str(BUILD / "python"))


@pytest.fixture(scope="session")
def altgrad_cli():
    """The path of the altgrad command line of the same build."""
    return str(BUILD / "altgrad")
