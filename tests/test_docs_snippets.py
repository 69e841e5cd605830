"""The Python snippet of docs/index.md names only what it imports or defines (a copy-pasted snippet
must not end in a NameError)."""

import ast
import builtins
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def _undefined(code: str) -> list:
    tree = ast.parse(code)
    defined = set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            defined |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.arg):
            defined.add(node.arg)
    return sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id not in defined})


def test_the_home_page_snippet_imports_what_it_calls():
    (code,) = BLOCK.findall((ROOT / "docs" / "index.md").read_text())
    assert _undefined(code) == []
