#!/usr/bin/env python3
"""Copies each program of examples/tutorial/ into its ```cpp block of docs/tutorial.md (the block
whose first line names the file), so that the page shows the programs as they are.
test/docs/test_tutorial.cpp fails when they differ: run this after editing a program."""
import argparse
import pathlib
import re

root = pathlib.Path(__file__).resolve().parent.parent
page = root / "docs" / "tutorial.md"


def block(match):
    name = match.group(1)
    return "```cpp\n" + (root / name).read_text().rstrip("\n") + "\n```"


parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--check", action="store_true", help="only say whether the page is up to date (exit 1 if not)")
args = parser.parse_args()
old = page.read_text()
text = re.sub(r"```cpp\n// (examples/tutorial/[\w.]+):.*?\n```", block, old, flags=re.S)
if args.check:
    print(f"adx: {page.relative_to(root)} is " + ("up to date" if text == old else "out of date: run scripts/sync_tutorial.py"))
    raise SystemExit(0 if text == old else 1)
page.write_text(text)
print(f"adx: {page.relative_to(root)} now shows the programs of examples/tutorial/")
