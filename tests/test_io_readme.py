"""The README's "from raw text to a trained model" walk-through, run verbatim in a fresh folder."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

from cwal.io import read_corpus

REPO = Path(__file__).resolve().parent.parent


def walkthrough() -> list[str]:
    """The command lines of the README's walk-through block (comments dropped)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- walkthrough -->\s*```bash\n(.*?)```", text, re.S)
    assert block, "the README has no walk-through block"
    lines = [line.split("  #")[0].strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def test_readme_walkthrough_runs_verbatim(tmp_path: Path) -> None:
    (tmp_path / "demo").symlink_to(REPO / "demo")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("CWAL_DATABASE_URL", None)
    script = "set -e\n" + "\n".join(walkthrough()).replace("python ", f"{sys.executable} ") + "\n"
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "demo/articles/harbour.txt: 3 sentences" in done.stdout
    gold = list(read_corpus(tmp_path / "news-gold.conll"))
    assert len(gold) == 100 and all(s.tags for s in gold)
    assert (tmp_path / "news.npz").exists()
    tasks = json.loads((tmp_path / "articles.json").read_text(encoding="utf-8"))
    assert len(tasks) == 5 and all("predictions" in t for t in tasks)
    first = next(t for t in tasks if t["data"]["doc"] == "harbour.txt")  # files in name order
    text = first["data"]["text"]
    assert text.startswith("Gisli told reporters in Peindberg") and tasks[0]["data"]["start"] == 0
    for result in first["predictions"][0]["result"]:
        value = result["value"]
        assert text[value["start"] : value["end"]] == value["text"]
        assert 0.0 <= result["score"] <= 1.0
    with zipfile.ZipFile(tmp_path / "news-brat.zip") as z:
        assert sorted(z.namelist()) == ["ner_eval.ann", "ner_eval.txt"]
