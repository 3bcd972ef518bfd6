//! The trace (`[ask] trace`): one JSON line per finished question — its route, the queries
//! tried, every hit with its scores, the refusal and the timings — for debugging routing and
//! retrieval after the fact.

use crate::base::contract::Answer;
use std::io::Write;
use std::path::Path;

/// Appends `answer` to the trace at `path`. Best effort: a trace that cannot be written never
/// fails a question.
pub fn append(path: &Path, answer: &Answer) {
    let line = serde_json::json!({
        "time": std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        "query": answer.query,
        "route": answer.route,
        "queries": answer.queries,
        "plan": answer.plan,
        "attempts": answer.attempts,
        "hits": answer.hits.iter().map(|h| serde_json::json!({
            "skill": h.skill, "source": h.source, "chunk_id": h.chunk_id, "scores": h.scores})).collect::<Vec<_>>(),
        "refusal": answer.refusal,
        "timings_ms": answer.timings_ms,
    });
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
        let _ = writeln!(f, "{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_one_line_per_answer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs/trace.jsonl");
        append(&path, &Answer::new(None, "first".into()));
        append(&path, &Answer::new(None, "second".into()));
        let text = std::fs::read_to_string(&path).unwrap();
        let queries: Vec<String> = text
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["query"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(queries, ["first", "second"]);
    }
}
