#!/usr/bin/env python3
"""Builds the many-skill benchmark: one skill per article of a benchmark's encyclopedia-like
skills, as when a team turns a document collection into skills. Each SKILL.md has only a name and
a one-line description (the article's title). Questions are the benchmark's fact rows whose gold
is one article (relabelled to that article's skill) plus its out-of-scope rows.

  bench/many_skills.py SOURCE_BENCH TARGET N [SKILL...]

Articles that answer questions come first (so every size has questions), then the others, both
in file order; N articles in all. Deterministic: the same inputs give the same benchmark.
"""
import json
import re
import shutil
import sys
from pathlib import Path


def title_of(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line:
            return line.lstrip("#").strip()[:120]
    return path.stem


def main() -> None:
    source, target, n = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    skills = sys.argv[4:] or ["zh-encyclopedia", "coronavirus-research"]
    rows = [json.loads(l) for l in (source / "queries.jsonl").read_text(encoding="utf-8").splitlines() if l.strip()]
    articles = []  # (skill, relative path)
    for skill in skills:
        articles += [(skill, p.relative_to(source / "skills" / skill).as_posix())
                     for p in sorted((source / "skills" / skill / "knowledge").rglob("*.md"))]
    asked = {(r["skill"], r["gold_sources"][0]) for r in rows
             if r.get("type") == "fact" and r.get("skill") in skills and len(r.get("gold_sources", [])) == 1}
    chosen = [a for a in articles if a in asked] + [a for a in articles if a not in asked]
    chosen = chosen[:n]
    if target.exists():
        shutil.rmtree(target)
    ids = {}
    for i, (skill, rel) in enumerate(chosen):
        path = source / "skills" / skill / rel
        slug = re.sub(r"[^a-z0-9]+", "-", Path(rel).stem.lower()).strip("-")[:40] or "article"
        skill_id = f"a{i:03d}-{slug}"
        ids[(skill, rel)] = skill_id
        folder = target / "skills" / skill_id
        (folder / "knowledge").mkdir(parents=True)
        shutil.copy(path, folder / "knowledge" / path.name)
        description = title_of(path).replace('"', "'")
        (folder / "SKILL.md").write_text(
            f'---\nname: {skill_id}\ndescription: "{description}"\n---\n', encoding="utf-8")
    with open(target / "queries.jsonl", "w", encoding="utf-8") as out:
        for r in rows:
            if r.get("type") == "fact" and r.get("skill") in skills and len(r.get("gold_sources", [])) == 1:
                key = (r["skill"], r["gold_sources"][0])
                if key not in ids:
                    continue
                r = dict(r, skill=ids[key], gold_sources=[key[1]])
            elif r.get("type") != "out_of_scope":
                continue
            out.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(chosen)} skills, {sum(1 for _ in open(target / 'queries.jsonl'))} questions in {target}")


if __name__ == "__main__":
    main()
