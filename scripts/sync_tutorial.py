#!/usr/bin/env python3
"""Copies each program of examples/tutorial/ into its ```cpp block of docs/tutorial.md (the block
whose first line names the file), so that the page shows the programs as they are.
test/docs/test_tutorial.cpp fails when they differ: run this after editing a program."""
import pathlib
import re

root = pathlib.Path(__file__).resolve().parent.parent
page = root / "docs" / "tutorial.md"


def block(match):
    name = match.group(1)
    return "```cpp\n" + (root / name).read_text().rstrip("\n") + "\n```"


text = re.sub(r"```cpp\n// (examples/tutorial/[\w.]+):.*?\n```", block, page.read_text(), flags=re.S)
page.write_text(text)
print(f"adx: {page.relative_to(root)} now shows the programs of examples/tutorial/")
