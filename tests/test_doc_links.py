"""Every relative link in the README and docs/ points to a file that exists, and every
`#anchor` into a .md file to one of its headings; so do the `docs/<page>.md#anchor`
references in code comments (the house rule: comments point into docs/)."""
import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
DOCS_REF = re.compile(r"docs/([A-Za-z0-9_]+\.md)(?:#([A-Za-z0-9_-]+))?")
SKIPPED_DIRS = {".git", "out", "build", "dist", "wheels", "__pycache__"}


def _outside_fences(text: str):
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            yield line


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text lower-cased, punctuation dropped, spaces to -."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)     # a link keeps its text
    text = text.replace("`", "").strip().lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in _outside_fences(page.read_text(encoding="utf-8")):
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def _check(target: Path, anchor: str | None, where: str) -> list[str]:
    if not target.exists():
        return [f"{where}: {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target} does not exist"]
    if anchor and target.suffix == ".md" and anchor not in anchors(target):
        return [f"{where}: no heading #{anchor} in {target.relative_to(ROOT)}"]
    return []


def test_slug_follows_github():
    assert slug("Auto Skeleton — `bench/skeleton.py`") == "auto-skeleton--benchskeletonpy"
    assert slug("Scale-out — `batch` and `bench/train_speed.py`") == \
        "scale-out--batch-and-benchtrain_speedpy"
    assert slug("Supported Blender versions") == "supported-blender-versions"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    bad = []
    for n, line in enumerate(_outside_fences(page.read_text(encoding="utf-8")), 1):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):                       # http:, https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            bad += _check((page.parent / path).resolve() if path else page, anchor or None,
                          f"{page.relative_to(ROOT)}: {target}")
        for name, anchor in DOCS_REF.findall(line):               # docs pages named in prose
            bad += _check(ROOT / "docs" / name, anchor or None, f"{page.relative_to(ROOT)}: docs/{name}")
    assert not bad, "\n".join(bad)


def _python_files():
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).parts
        if any(p in SKIPPED_DIRS or p.startswith(".venv") for p in parts):
            continue
        yield path


def test_code_comments_point_to_existing_doc_anchors():
    bad = []
    for path in _python_files():
        for name, anchor in DOCS_REF.findall(path.read_text(encoding="utf-8")):
            bad += _check(ROOT / "docs" / name, anchor or None, str(path.relative_to(ROOT)))
    assert not bad, "\n".join(sorted(set(bad)))
