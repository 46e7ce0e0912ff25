#!/usr/bin/env python3
"""Holds every folder's #includes to docs/architecture.md's "includes" lines, and those lines to the
build's views (src/CMakeLists.txt, altgrad_view). A backend (ops/cpu, ops/cuda, quant/cuda) counts as
a folder of its own, so that the layers above ops/ cannot reach past the seam even where their view
admits the whole ops/ folder. Exits 1 naming each difference, with a file and line where there is one."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
BACKENDS = ("ops/cpu", "ops/cuda", "quant/cuda")
SOURCES = (".hpp", ".cpp", ".cu", ".cuh", ".h")
# Folders outside src/ that the diagram lists, and where their sources are.
OUTSIDE_SRC = {"python": ROOT / "python" / "src"}


def documented(architecture):
    """{folder: set of included folders} from the diagram's "includes" lines."""
    block = architecture.split("```\n", 2)[1]
    walls, folder = {}, None
    for line in block.splitlines():
        if heading := re.match(r"(\w+)/\s", line):
            folder = heading.group(1)
        elif (named := re.match(r"\s+includes (.+)$", line)) and folder:
            walls[folder] = set() if named.group(1) == "nothing" else {n.strip() for n in named.group(1).split(",")}
    return walls


def unit_of(path):
    """The folder an include path belongs to: a backend's subfolder, else its first component."""
    return next((b for b in BACKENDS if path.startswith(b + "/")), path.split("/", 1)[0])


def included(folder):
    """{included folder: first "file:line"} over every source file of `folder`."""
    base = OUTSIDE_SRC.get(folder, ROOT / "src" / folder)
    found = {}
    for file in sorted(p for p in base.rglob("*") if p.suffix in SOURCES):
        own = unit_of(str(file.relative_to(ROOT / "src"))) if folder not in OUTSIDE_SRC else None
        for number, line in enumerate(file.read_text().splitlines(), 1):
            match = re.match(r'\s*#\s*include\s+"([a-z_]+/[^"]+)"', line)
            if not match:
                continue
            unit = unit_of(match.group(1))
            # A folder's own files and its own backends, and a backend's own folder, are inside the wall.
            if unit == folder or unit.startswith(folder + "/") or (own and unit == own) or \
                    (own in BACKENDS and unit == own.split("/")[0]):
                continue
            found.setdefault(unit, f"{file.relative_to(ROOT)}:{number}")
    return found


def views(cmake):
    """{view name: set of folders} from altgrad_view(NAME FOLDER...) calls."""
    return {m.group(1): set(m.group(2).split()) for m in re.finditer(r"^altgrad_view\((\w+) ([^)]*)\)", cmake, re.M)}


def main():
    walls = documented((ROOT / "docs" / "architecture.md").read_text())
    view = views((ROOT / "src" / "CMakeLists.txt").read_text())
    errors = []
    folders = sorted(p.name for p in (ROOT / "src").iterdir() if p.is_dir()) + sorted(OUTSIDE_SRC)
    for folder in folders:
        if folder not in walls:
            errors.append(f"docs/architecture.md: no \"includes\" line for {folder}/")
            continue
        actual = included(folder)
        for unit in sorted(set(actual) - walls[folder]):
            errors.append(f"{actual[unit]}: {folder}/ includes {unit}/, which docs/architecture.md's line for "
                          f"{folder}/ does not name")
        for unit in sorted(walls[folder] - set(actual)):
            errors.append(f"docs/architecture.md: the line for {folder}/ names {unit}/, which no file of {folder}/ "
                          "includes")
        if folder in view:
            outside = {u for u in walls[folder] if u.split("/")[0] not in view[folder]}
            for unit in sorted(outside):
                errors.append(f"src/CMakeLists.txt: {folder}/'s view does not hold {unit}/, which "
                              f"docs/architecture.md's line for {folder}/ names")
    for folder in sorted(set(walls) - set(folders)):
        errors.append(f"docs/architecture.md: an \"includes\" line for {folder}/, which does not exist")
    for error in errors:
        print(error, file=sys.stderr)
    print(f"include_walls: {len(folders)} folders, {len(errors)} differences")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
