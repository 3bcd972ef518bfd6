//! Leave-gold-out variants of a benchmark (docs/design.md §7): does a skill refuse when its
//! knowledge lacks the answer?
//!
//! For each skill, a seeded share of the gold files of its fact rows is left out of a copy of the
//! benchmark's skills. Every fact row whose gold files are all left out becomes an `unanswerable`
//! row (id + `-lgo`): the same question, asked of the copy, must now be refused. A benchmark's own
//! unanswerable rows are few (3 to 6 per statute skill on dev v2); these are as many as its fact
//! rows allow, and they are the questions a skill's users really ask.
//!
//! The sample differs from `../shared/tools/leave-gold-out.py` (Python's `random.sample`): each
//! skill draws with its own SplitMix64 stream seeded from the seed and the skill's id, so a
//! skill's removed files depend only on the seed and its own gold files (adding a skill changes
//! no other skill's variant), and the draw is the same on every platform and release (no
//! dependency whose algorithm may change). The count per skill is Python's: at least one,
//! `floor(gold files × share)`.

use crate::{score, BenchRow, EvalError, Report};
use serde::{Deserialize, Serialize};
use skillrag_ask::Answer;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The share of each skill's gold files left out when none is given.
pub const DEFAULT_SHARE: f64 = 0.3;
/// The seed when none is given (the Python tool's default).
pub const DEFAULT_SEED: u64 = 7;
/// Suffix of a converted row's id.
pub const ID_SUFFIX: &str = "-lgo";

/// Which gold files a variant leaves out, and which questions that makes unanswerable.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub share: f64,
    pub seed: u64,
    /// Per skill, the gold files left out, as `gold_sources` names them (relative to the skill
    /// folder, `/`-separated).
    pub removed: BTreeMap<String, BTreeSet<String>>,
    /// The fact rows all of whose gold files are left out, as `unanswerable` rows with id + `-lgo`.
    pub rows: Vec<BenchRow>,
}

/// Draws the files to leave out and converts the rows they orphan. Pure: reads no file.
pub fn plan(rows: &[BenchRow], share: f64, seed: u64) -> Result<Plan, EvalError> {
    // `!(share > 0.0)` also refuses NaN.
    if !(share > 0.0 && share <= 1.0) {
        return Err(EvalError::Share(share));
    }
    let mut gold: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for row in rows.iter().filter(|r| r.kind == "fact") {
        // A fact row without a skill has no skill folder to leave its gold out of.
        let Some(skill) = row.skill.as_deref() else { continue };
        gold.entry(skill).or_default().extend(row.gold_sources.iter().map(String::as_str));
    }
    gold.retain(|_, files| !files.is_empty());
    if gold.is_empty() {
        return Err(EvalError::NoGold);
    }
    let removed: BTreeMap<String, BTreeSet<String>> = gold
        .into_iter()
        .map(|(skill, files)| {
            let files: Vec<&str> = files.into_iter().collect();
            // Python's count: floor, but never nothing.
            let count = ((files.len() as f64 * share).floor() as usize).clamp(1, files.len());
            let mut rng = SplitMix64::new(seed ^ fnv1a(skill.as_bytes()));
            let chosen = sample(&files, count, &mut rng).into_iter().map(str::to_string).collect();
            (skill.to_string(), chosen)
        })
        .collect();
    let converted = rows
        .iter()
        .filter(|r| r.kind == "fact" && !r.gold_sources.is_empty())
        .filter(|r| {
            let gone = r.skill.as_ref().and_then(|s| removed.get(s));
            gone.is_some_and(|gone| r.gold_sources.iter().all(|g| gone.contains(g)))
        })
        .map(|r| BenchRow { id: format!("{}{ID_SUFFIX}", r.id), kind: "unanswerable".into(), ..r.clone() })
        .collect();
    Ok(Plan { share, seed, removed, rows: converted })
}

/// `count` distinct items of `items`, by a partial Fisher–Yates shuffle.
fn sample<'a>(items: &[&'a str], count: usize, rng: &mut SplitMix64) -> Vec<&'a str> {
    let mut pool = items.to_vec();
    for i in 0..count.min(pool.len()) {
        let j = i + rng.below(pool.len() - i);
        pool.swap(i, j);
    }
    pool.truncate(count);
    pool
}

/// SplitMix64 (Steele, Lea and Flood 2014): a tiny generator whose output is fixed by its seed.
struct SplitMix64(u64);

impl SplitMix64 {
    fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (> 0), by multiply-shift: its bias, at most n / 2^64, is far below
    /// anything a benchmark's few hundred files could show.
    fn below(&mut self, n: usize) -> usize {
        ((self.next() as u128 * n as u128) >> 64) as usize
    }
}

/// FNV-1a, to give each skill its own stream from one seed.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// The variant on disk: `dir/skills` (the benchmark's skills less the removed files) and
/// `dir/queries.jsonl` (the converted rows, which `../shared/tools/outcomes.py` also reads).
#[derive(Debug, Clone)]
pub struct Variant {
    pub dir: PathBuf,
    /// The converted rows, reading cited documents from the variant.
    pub rows: Vec<BenchRow>,
    /// Gold files the plan removed that the benchmark does not hold (`skill/file`): their rows
    /// were already unanswerable from the benchmark itself, which is worth knowing.
    pub missing: Vec<String>,
    /// Symbolic links in the benchmark's skills, not copied (`skill/path`): a link may point
    /// anywhere, and the engine would refuse one that leaves the project anyway.
    pub links_skipped: Vec<String>,
}

/// Writes the variant of `bench` that `plan` describes into `dir` (replacing its `skills/`).
pub fn build(bench: &Path, plan: &Plan, dir: &Path) -> Result<Variant, EvalError> {
    let io = |p: &Path| {
        let p = p.display().to_string();
        move |e| EvalError::Io(p, e)
    };
    let skills = dir.join("skills");
    // The copy of an earlier run may lack files this plan keeps, or hold files it removes.
    if std::fs::symlink_metadata(&skills).is_ok() {
        std::fs::remove_dir_all(&skills).map_err(io(&skills))?;
    }
    std::fs::create_dir_all(&skills).map_err(io(&skills))?;
    let mut left_out: BTreeSet<String> = BTreeSet::new();
    let mut links_skipped = Vec::new();
    // The removed files are skipped while copying, never deleted afterwards: a gold source named
    // `../x` or `/etc/x` can therefore not reach a file outside the copy.
    copy_tree(
        &bench.join("skills"),
        &skills,
        "",
        &mut |rel| {
            let (skill, file) = rel.split_once('/').unwrap_or((rel, ""));
            let keep = !plan.removed.get(skill).is_some_and(|gone| gone.contains(file));
            if !keep {
                left_out.insert(rel.to_string());
            }
            keep
        },
        &mut links_skipped,
    )?;
    let missing = plan
        .removed
        .iter()
        .flat_map(|(skill, files)| files.iter().map(move |f| format!("{skill}/{f}")))
        .filter(|f| !left_out.contains(f))
        .collect();
    let rows: Vec<BenchRow> =
        plan.rows.iter().map(|r| BenchRow { bench: Some(dir.to_path_buf()), ..r.clone() }).collect();
    let lines: Vec<String> = rows
        .iter()
        .map(serde_json::to_string)
        .collect::<Result<_, _>>()
        .map_err(|e| EvalError::Io(dir.display().to_string(), std::io::Error::other(e)))?;
    let queries = dir.join("queries.jsonl");
    let text = if lines.is_empty() { String::new() } else { lines.join("\n") + "\n" };
    std::fs::write(&queries, text).map_err(io(&queries))?;
    Ok(Variant { dir: dir.to_path_buf(), rows, missing, links_skipped })
}

/// Copies `from` into `to`, asking `keep` about each file by its `/`-separated path below the
/// skills folder (`skill/knowledge/a.md`); the removed files are the ones it refuses.
fn copy_tree(
    from: &Path,
    to: &Path,
    rel: &str,
    keep: &mut dyn FnMut(&str) -> bool,
    links_skipped: &mut Vec<String>,
) -> Result<(), EvalError> {
    let io = |p: &Path| {
        let p = p.display().to_string();
        move |e| EvalError::Io(p, e)
    };
    let mut entries: Vec<std::fs::DirEntry> =
        std::fs::read_dir(from).map_err(io(from))?.collect::<Result<_, _>>().map_err(io(from))?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        let child = if rel.is_empty() { name.clone() } else { format!("{rel}/{name}") };
        let kind = entry.file_type().map_err(io(&path))?;
        if kind.is_symlink() {
            links_skipped.push(child);
        } else if kind.is_dir() {
            let target = to.join(&name);
            std::fs::create_dir_all(&target).map_err(io(&target))?;
            copy_tree(&path, &target, &child, keep, links_skipped)?;
        } else if kind.is_file() && keep(&child) {
            std::fs::copy(&path, to.join(&name)).map_err(io(&path))?;
        }
    }
    Ok(())
}

/// What the leave-gold-out questions got, overall and per skill: the measures of
/// `../shared/tools/outcomes.py` for unanswerable rows (refused is right, answered is wrong).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LeaveGoldOut {
    pub share: f64,
    pub seed: u64,
    /// Gold files left out of the copy.
    pub removed_files: usize,
    /// Questions whose gold files were all left out (asked of the copy).
    pub questions: usize,
    /// Of those, answered anyway (not refused).
    pub answered: usize,
    /// `answered / questions`; `null` without questions.
    pub answered_anyway: Option<f64>,
    /// Refusals by kind (`not_found`, `out_of_scope`, …).
    pub refused: BTreeMap<String, usize>,
    pub per_skill: BTreeMap<String, SkillOutcome>,
    /// Per skill, the gold files left out.
    pub removed: BTreeMap<String, Vec<String>>,
    /// Gold files named by fact rows that the benchmark lacks (`skill/file`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_gold: Vec<String>,
    /// Links in the benchmark's skills that the copy leaves out (`skill/path`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links_skipped: Vec<String>,
    /// The questions answered anyway, with what the answer cited: where to look first.
    pub answered_rows: Vec<AnsweredAnyway>,
    /// The full scoring of these rows (routing, latency, per-row outcomes).
    pub report: Report,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SkillOutcome {
    pub removed_files: usize,
    pub questions: usize,
    pub answered: usize,
    pub answered_anyway: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct AnsweredAnyway {
    pub id: String,
    pub skill: Option<String>,
    pub query: String,
    /// `skill/source` of each document the answer cites, once each.
    pub cited: Vec<String>,
}

/// Scores the answers to a variant's rows.
pub fn report(plan: &Plan, variant: &Variant, answers: &[Answer], bench: &str) -> Result<LeaveGoldOut, EvalError> {
    let scored = score(&format!("{bench} (leave-gold-out)"), "skillrag", &variant.rows, answers)?;
    let by_id: BTreeMap<&str, &Answer> = answers.iter().filter_map(|a| a.id.as_deref().map(|id| (id, a))).collect();
    let mut out = LeaveGoldOut {
        share: plan.share,
        seed: plan.seed,
        removed_files: plan.removed.values().map(BTreeSet::len).sum(),
        questions: variant.rows.len(),
        removed: plan.removed.iter().map(|(s, f)| (s.clone(), f.iter().cloned().collect())).collect(),
        missing_gold: variant.missing.clone(),
        links_skipped: variant.links_skipped.clone(),
        ..Default::default()
    };
    for (skill, files) in &plan.removed {
        out.per_skill.entry(skill.clone()).or_default().removed_files = files.len();
    }
    for row in &variant.rows {
        // `score` has already failed on a row without an answer.
        let Some(answer) = by_id.get(row.id.as_str()) else { return Err(EvalError::Missing(row.id.clone())) };
        let skill = out.per_skill.entry(row.skill.clone().unwrap_or_else(|| "(none)".into())).or_default();
        skill.questions += 1;
        match &answer.refusal {
            Some(r) => *out.refused.entry(r.kind.as_str().to_string()).or_default() += 1,
            None => {
                skill.answered += 1;
                out.answered += 1;
                out.answered_rows.push(AnsweredAnyway {
                    id: row.id.clone(),
                    skill: row.skill.clone(),
                    query: row.query.clone(),
                    cited: cited(answer),
                });
            }
        }
    }
    let rate = |a: usize, n: usize| (n > 0).then(|| a as f64 / n as f64);
    out.answered_anyway = rate(out.answered, out.questions);
    for s in out.per_skill.values_mut() {
        s.answered_anyway = rate(s.answered, s.questions);
    }
    out.report = scored;
    Ok(out)
}

/// `skill/source` of each document the answer cites, once each, in citation order (two passages
/// of one document are two citations).
fn cited(answer: &Answer) -> Vec<String> {
    let mut seen = BTreeSet::new();
    answer.citations.iter().map(|c| format!("{}/{}", c.skill, c.source)).filter(|d| seen.insert(d.clone())).collect()
}

/// Questions answered anyway listed in the Markdown section.
const ANSWERED_EXAMPLES: usize = 20;

/// The report's leave-gold-out section.
pub fn markdown(r: &LeaveGoldOut) -> String {
    let pct = |v: Option<f64>| v.map_or_else(|| "–".to_string(), |x| format!("{x:.3}"));
    let mut out = format!(
        "\n## Leave-gold-out: {} questions whose gold sources were removed; answered anyway: {} ({})\n\n",
        r.questions,
        r.answered,
        pct(r.answered_anyway)
    );
    out.push_str(&format!(
        "{} gold files ({} of each skill's, seed {}) were left out of a copy of the skills; the fact rows whose \
         gold files were all left out were asked of that copy, and each should be refused.\n",
        r.removed_files, r.share, r.seed
    ));
    if r.questions == 0 {
        out.push_str("\nNo fact row lost all of its gold files: raise `--share` to convert some.\n");
    }
    if !r.refused.is_empty() {
        let kinds: Vec<String> = r.refused.iter().map(|(k, n)| format!("{k} {n}")).collect();
        out.push_str(&format!("Refused: {}.\n", kinds.join(", ")));
    }
    out.push_str("\n| skill | gold files removed | questions | answered anyway | share answered anyway |\n|---|---|---|---|---|\n");
    for (skill, s) in &r.per_skill {
        out.push_str(&format!(
            "| {skill} | {} | {} | {} | {} |\n",
            s.removed_files,
            s.questions,
            s.answered,
            pct(s.answered_anyway)
        ));
    }
    if !r.answered_rows.is_empty() {
        out.push_str("\nAnswered anyway (the cited documents are where the knowledge seemed to answer):\n\n");
        for a in r.answered_rows.iter().take(ANSWERED_EXAMPLES) {
            let skill = a.skill.as_deref().unwrap_or("(none)");
            let cited = if a.cited.is_empty() { "no citation".to_string() } else { a.cited.join(", ") };
            out.push_str(&format!("- `{}` ({skill}) {}: {cited}\n", a.id, a.query));
        }
        if r.answered_rows.len() > ANSWERED_EXAMPLES {
            out.push_str(&format!(
                "- … and {} more (see `leave_gold_out.answered_rows` in report.json)\n",
                r.answered_rows.len() - ANSWERED_EXAMPLES
            ));
        }
    }
    if !r.missing_gold.is_empty() {
        out.push_str(&format!(
            "\n{} removed gold files are not in the benchmark, so their rows were unanswerable already: {}\n",
            r.missing_gold.len(),
            r.missing_gold.join(", ")
        ));
    }
    if !r.links_skipped.is_empty() {
        out.push_str(&format!(
            "\n{} symbolic links in the benchmark's skills were not copied: {}\n",
            r.links_skipped.len(),
            r.links_skipped.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(id: &str, skill: &str, gold: &[&str]) -> BenchRow {
        BenchRow {
            id: id.into(),
            query: format!("question {id}"),
            skill: Some(skill.into()),
            answers: vec!["x".into()],
            gold_sources: gold.iter().map(|g| g.to_string()).collect(),
            kind: "fact".into(),
            bench: None,
        }
    }

    fn rows() -> Vec<BenchRow> {
        let mut rows: Vec<BenchRow> =
            (0..10).map(|i| fact(&format!("law-{i}"), "law", &[&format!("knowledge/{i}.md")])).collect();
        // Two gold files: converts only when both are removed.
        rows.push(fact("law-both", "law", &["knowledge/0.md", "knowledge/1.md"]));
        rows.push(fact("tea-0", "tea", &["knowledge/green.md"]));
        rows.push(fact("tea-1", "tea", &["knowledge/white.md"]));
        rows.push(BenchRow { kind: "unanswerable".into(), ..fact("tea-u", "tea", &["knowledge/green.md"]) });
        rows.push(BenchRow { skill: None, ..fact("none", "x", &["knowledge/none.md"]) });
        rows
    }

    #[test]
    fn removes_a_seeded_share_per_skill_and_converts_the_orphaned_rows() {
        let plan = plan(&rows(), 0.3, 7).unwrap();
        // floor(10 × 0.3) = 3 of law's 10 files; floor(2 × 0.3) = 0 → at least 1 of tea's 2.
        assert_eq!(plan.removed["law"].len(), 3);
        assert_eq!(plan.removed["tea"].len(), 1);
        assert_eq!(plan.removed.len(), 2, "a fact row without a skill has no folder: {plan:?}");
        // Every single-file row of a removed file converts, nothing else does (unanswerable rows
        // stay out); ids get the suffix and the type becomes unanswerable.
        let gone = |s: &str, f: &str| plan.removed[s].contains(f);
        let mut expected: Vec<String> =
            (0..10).filter(|i| gone("law", &format!("knowledge/{i}.md"))).map(|i| format!("law-{i}-lgo")).collect();
        if gone("law", "knowledge/0.md") && gone("law", "knowledge/1.md") {
            expected.push("law-both-lgo".into());
        }
        expected.push(if gone("tea", "knowledge/green.md") { "tea-0-lgo" } else { "tea-1-lgo" }.into());
        let ids: Vec<&str> = plan.rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, expected);
        assert!(plan.rows.iter().all(|r| r.kind == "unanswerable" && r.answers == ["x"]));
        // The same seed draws the same files; the draw of one skill ignores the others.
        assert_eq!(plan, super::plan(&rows(), 0.3, 7).unwrap());
        let law_only: Vec<BenchRow> = rows().into_iter().filter(|r| r.skill.as_deref() == Some("law")).collect();
        assert_eq!(super::plan(&law_only, 0.3, 7).unwrap().removed["law"], plan.removed["law"]);
        let others = (1..20).map(|seed| super::plan(&rows(), 0.3, seed).unwrap().removed["law"].clone());
        assert!(others.into_iter().any(|r| r != plan.removed["law"]), "the seed changes nothing");
    }

    #[test]
    fn the_whole_share_converts_every_fact_row() {
        let plan = plan(&rows(), 1.0, 7).unwrap();
        assert_eq!(plan.removed["law"].len(), 10);
        assert_eq!(plan.rows.len(), 13, "{:?}", plan.rows);
    }

    #[test]
    fn refuses_a_share_outside_the_unit_interval_and_a_bench_without_gold() {
        for share in [0.0, -0.1, 1.5, f64::NAN] {
            assert!(matches!(plan(&rows(), share, 7), Err(EvalError::Share(_))), "{share}");
        }
        let no_gold: Vec<BenchRow> = rows().into_iter().map(|r| BenchRow { gold_sources: vec![], ..r }).collect();
        assert!(matches!(plan(&no_gold, 0.3, 7), Err(EvalError::NoGold)));
        let message = plan(&no_gold, 0.3, 7).unwrap_err().to_string();
        assert!(message.contains("gold_sources"), "{message}");
    }

    #[test]
    fn the_copy_lacks_exactly_the_removed_files() {
        let tmp = tempfile::tempdir().unwrap();
        let bench = tmp.path().join("bench");
        for (skill, file) in [
            ("law", "SKILL.md"),
            ("law", "knowledge/0.md"),
            ("law", "knowledge/1.md"),
            ("law", "knowledge/sub/2.md"),
            ("tea", "knowledge/green.md"),
        ] {
            let path = bench.join("skills").join(skill).join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, file).unwrap();
        }
        std::fs::write(tmp.path().join("outside.md"), "outside").unwrap();
        let rows = vec![
            fact("a", "law", &["knowledge/0.md"]),
            fact("b", "law", &["knowledge/sub/2.md"]),
            fact("c", "tea", &["knowledge/gone.md"]),
            fact("d", "law", &["../../outside.md"]),
        ];
        let mut plan = plan(&rows, 1.0, 7).unwrap();
        let out = tmp.path().join("variant");
        // A stale file of an earlier run is not kept.
        std::fs::create_dir_all(out.join("skills/law/knowledge")).unwrap();
        std::fs::write(out.join("skills/law/knowledge/stale.md"), "stale").unwrap();
        let variant = build(&bench, &plan, &out).unwrap();
        let skills = out.join("skills");
        assert!(skills.join("law/SKILL.md").is_file() && skills.join("law/knowledge/1.md").is_file());
        assert!(!skills.join("law/knowledge/0.md").exists() && !skills.join("law/knowledge/sub/2.md").exists());
        assert!(!skills.join("law/knowledge/stale.md").exists());
        assert!(tmp.path().join("outside.md").is_file(), "a gold source outside the copy is never touched");
        assert!(bench.join("skills/law/knowledge/0.md").is_file(), "the benchmark is never touched");
        assert_eq!(variant.missing, ["law/../../outside.md", "tea/knowledge/gone.md"]);
        assert!(variant.rows.iter().all(|r| r.bench.as_deref() == Some(out.as_path())));
        let written = std::fs::read_to_string(out.join("queries.jsonl")).unwrap();
        assert_eq!(written.lines().count(), 4, "{written}");
        assert!(written.contains(r#""id":"a-lgo""#) && written.contains(r#""type":"unanswerable""#), "{written}");
        // A plan that removes nothing of law keeps its files.
        plan.removed.remove("law");
        build(&bench, &plan, &out).unwrap();
        assert!(skills.join("law/knowledge/0.md").is_file());
    }

    #[test]
    fn counts_the_questions_answered_anyway_per_skill() {
        use skillrag_ask::{Citation, Refusal, RefusalKind};
        let rows = vec![fact("a", "law", &["k/a.md"]), fact("b", "law", &["k/b.md"]), fact("c", "tea", &["k/c.md"])];
        let plan = plan(&rows, 1.0, 7).unwrap();
        let variant = Variant { dir: PathBuf::new(), rows: plan.rows.clone(), missing: vec![], links_skipped: vec![] };
        let citation = |source: &str| Citation {
            n: 1,
            context_n: 1,
            skill: "law".into(),
            source: source.into(),
            heading: String::new(),
            pages: None,
            image: None,
            label: None,
        };
        let mut answered = Answer::new(Some("a-lgo".into()), "question a".into());
        answered.citations = vec![citation("k/x.md"), citation("k/y.md"), citation("k/x.md")];
        let mut refused = Answer::new(Some("b-lgo".into()), "question b".into());
        refused.refusal = Some(Refusal { kind: RefusalKind::NotFound, message: String::new() });
        let mut out_of_scope = Answer::new(Some("c-lgo".into()), "question c".into());
        out_of_scope.refusal = Some(Refusal { kind: RefusalKind::OutOfScope, message: String::new() });
        let r = report(&plan, &variant, &[out_of_scope, answered, refused], "dev").unwrap();
        assert_eq!((r.questions, r.answered, r.removed_files), (3, 1, 3));
        assert_eq!(r.answered_anyway, Some(1.0 / 3.0));
        assert_eq!(r.refused, BTreeMap::from([("not_found".into(), 1), ("out_of_scope".into(), 1)]));
        assert_eq!(r.per_skill["law"].answered_anyway, Some(0.5));
        assert_eq!(r.per_skill["tea"].answered_anyway, Some(0.0));
        assert_eq!(r.answered_rows.len(), 1);
        assert_eq!(r.answered_rows[0].cited, ["law/k/x.md", "law/k/y.md"], "each document once");
        assert_eq!(r.report.overall.unanswerable_answered, Some(1.0 / 3.0));
        let md = markdown(&r);
        assert!(
            md.contains("## Leave-gold-out: 3 questions whose gold sources were removed; answered anyway: 1 (0.333)")
        );
        assert!(
            md.contains("| law | 2 | 2 | 1 | 0.500 |")
                && md.contains("- `a-lgo` (law) question a: law/k/x.md, law/k/y.md"),
            "{md}"
        );
        // An answer missing for a converted row is an error, not a refusal.
        assert!(matches!(report(&plan, &variant, &[], "dev"), Err(EvalError::Missing(_))));
    }

    #[cfg(unix)]
    #[test]
    fn links_are_not_followed_into_the_copy() {
        let tmp = tempfile::tempdir().unwrap();
        let bench = tmp.path().join("bench");
        std::fs::create_dir_all(bench.join("skills/law/knowledge")).unwrap();
        std::fs::write(bench.join("skills/law/knowledge/0.md"), "0").unwrap();
        std::fs::write(tmp.path().join("secret.md"), "secret").unwrap();
        std::os::unix::fs::symlink(tmp.path().join("secret.md"), bench.join("skills/law/knowledge/link.md")).unwrap();
        let plan = plan(&[fact("a", "law", &["knowledge/0.md"])], 1.0, 7).unwrap();
        let variant = build(&bench, &plan, &tmp.path().join("v")).unwrap();
        assert_eq!(variant.links_skipped, ["law/knowledge/link.md"]);
        assert!(!tmp.path().join("v/skills/law/knowledge/link.md").exists());
    }
}
