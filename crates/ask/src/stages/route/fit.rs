//! `skillrag tune`: fitting the router from the skills' own examples (positives for their skill,
//! near-miss negatives for the others) plus optional labelled questions, and keeping the result
//! in the project (`.skillrag/router.json`). The router is refitted automatically when the skills,
//! settings or indexes change; labelled questions given to `tune` are kept for those refits.

use crate::base::evidence::{phrase_key, phrases};
use crate::base::labelled::LabelledQuestion;
use crate::base::settings::AskSettings;
use crate::error::AskError;
use crate::stages::route::model::{self, RouterModel, Signals, TrainingQuestion};
use crate::stages::route::selection::{specificity, SkillModel};
use crate::stages::route::{Dispatcher, Probe, Probed};
use serde::{Deserialize, Serialize};
use skillrag_core::Filter;
use skillrag_engine::{Engine, SearchOptions};
use skillrag_skill::Skill;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

/// Bumped whenever fitting changes, so saved routers are refitted.
const ROUTER_VERSION: &str = "router-15";

/// Questions from many everyday domains (see the file's header).
const BACKGROUND: &str = include_str!("background.txt");

/// What `router.json` holds: the model and the labelled questions it was fitted on.
#[derive(Serialize, Deserialize)]
pub(crate) struct Saved {
    model: RouterModel,
    labelled: Vec<LabelledQuestion>,
}

fn path(engine: &Engine) -> PathBuf {
    engine.project.state_dir().join("router.json")
}

/// What fitting needs: the project, its profiles, its skills as profiled (with feedback
/// examples) and the ask settings.
struct Fitting<'a> {
    engine: &'a Engine,
    dispatcher: &'a Dispatcher,
    skills: &'a [Skill],
    settings: &'a AskSettings,
}

impl Fitting<'_> {
    fn probe(&self, text: &str, skills: &[String], leave_out: Option<(&str, usize)>) -> Result<Probed, AskError> {
        Ok(crate::stages::route::probe(self.engine, self.dispatcher, text, skills, self.settings.hits, leave_out)?)
    }
}

/// Everything the fitted model depends on.
fn fingerprint(engine: &Engine, settings: &AskSettings, labelled: &[LabelledQuestion]) -> String {
    let mut h = blake3::Hasher::new();
    h.update(ROUTER_VERSION.as_bytes());
    h.update(BACKGROUND.as_bytes());
    h.update(model::FEATURE_NAMES.join(",").as_bytes());
    h.update(&skillrag_text::ANALYZER_VERSION.to_le_bytes());
    h.update(engine.model().map_or("none", |m| m.id.as_str()).as_bytes());
    h.update(format!("{:?}", settings.retrieval).as_bytes());
    h.update(settings.refusal_cost.to_le_bytes().as_slice());
    for skill in engine.skills() {
        h.update(
            format!(
                "{}|{}|{:?}|{:?}|{:?}|{:?}",
                skill.id, skill.description, skill.triggers, skill.examples, skill.boundary, skill.title
            )
            .as_bytes(),
        );
        let generation = engine.store().generation(&skill.id).ok().flatten();
        h.update(format!("{generation:?}").as_bytes());
    }
    for l in labelled {
        h.update(format!("{}|{:?}|{}|{}", l.query, l.skill, l.answerable, l.feedback).as_bytes());
    }
    h.finalize().to_hex()[..16].to_string()
}

/// The saved router, when there is a readable one.
pub(crate) fn read_saved(engine: &Engine) -> Option<Saved> {
    std::fs::read_to_string(path(engine)).ok().and_then(|t| serde_json::from_str(&t).ok())
}

impl Saved {
    /// The labelled questions of a saved router (none without one).
    pub(crate) fn labelled(saved: Option<&Saved>) -> Vec<LabelledQuestion> {
        saved.map(|s| s.labelled.clone()).unwrap_or_default()
    }
}

/// The skills with the questions users' feedback assigned to them (a confirmed route, a
/// corrected misroute) added to their examples: relevance feedback into the skills' routing
/// profiles, so a question judged once routes by its own words next time, and questions like it
/// find the skill's profile closer. Questions judged unanswerable or out of scope stay labelled
/// questions only.
pub(crate) fn with_feedback(skills: &[Skill], labelled: &[LabelledQuestion]) -> Vec<Skill> {
    let mut out = skills.to_vec();
    for l in labelled.iter().filter(|l| is_feedback_example(l)) {
        if let Some(skill) = out.iter_mut().find(|s| l.skill.as_deref() == Some(s.id.as_str())) {
            if !skill.examples.contains(&l.query) {
                skill.examples.push(l.query.clone());
            }
        }
    }
    out
}

/// A feedback label that joins its skill's profile as an example (not small talk the gate
/// answers, which never reaches the router).
fn is_feedback_example(l: &LabelledQuestion) -> bool {
    l.feedback && l.answerable && l.skill.is_some() && crate::stages::gate::classify(&l.query).is_none()
}

/// The saved router if it still fits the project, else a fresh fit on its labelled questions;
/// with those questions.
pub(crate) fn load_or_fit(
    engine: &Engine,
    dispatcher: &Dispatcher,
    skills: &[Skill],
    settings: &AskSettings,
    saved: Option<Saved>,
) -> Result<(RouterModel, Vec<LabelledQuestion>), AskError> {
    let labelled = Saved::labelled(saved.as_ref());
    if let Some(saved) = saved {
        if saved.model.fingerprint == fingerprint(engine, settings, &labelled)
            && saved.model.weights.len() == model::FEATURES
        {
            return Ok((saved.model, labelled));
        }
    }
    Ok((fit_and_save(engine, dispatcher, skills, settings, labelled.clone())?, labelled))
}

pub(crate) fn fit_and_save(
    engine: &Engine,
    dispatcher: &Dispatcher,
    skills: &[Skill],
    settings: &AskSettings,
    labelled: Vec<LabelledQuestion>,
) -> Result<RouterModel, AskError> {
    let fitting = Fitting { engine, dispatcher, skills, settings };
    let questions = training_questions(&fitting, &labelled)?;
    let model = model::fit(&questions, fingerprint(engine, settings, &labelled), settings.refusal_cost);
    let saved = Saved { model, labelled };
    let target = path(engine);
    // The router is refitted when missing, so failing to save only costs time later.
    if let Some(dir) = target.parent() {
        if std::fs::create_dir_all(dir).is_ok() {
            if let Ok(text) = serde_json::to_string_pretty(&saved) {
                let tmp = target.with_extension("json.tmp");
                if std::fs::write(&tmp, text).is_ok() {
                    let _ = std::fs::rename(&tmp, &target);
                }
            }
        }
    }
    Ok(saved.model)
}

/// Signals of every example (left out of its own profile), of questions drawn from each skill's
/// knowledge, and of the labelled questions.
///
/// Each example also yields an *unanswerable twin*: the same question with the document that
/// best answers it left out of its skill's knowledge — what a question of the skill's domain
/// whose answer is not in the knowledge base looks like. It should still be routed to the skill
/// (and then refused as `not_found`); the evidence threshold is fitted to tell the two apart.
/// A few examples cannot show the range of such questions, so sentences sampled from the
/// knowledge add more twins (see [`knowledge_questions`]); for a skill without examples they are
/// its positives too.
fn training_questions(f: &Fitting<'_>, labelled: &[LabelledQuestion]) -> Result<Vec<TrainingQuestion>, AskError> {
    let skills: Vec<String> = f.skills.iter().map(|s| s.id.clone()).collect();
    let mut out = Vec::new();
    let sampled: Vec<Vec<String>> =
        f.skills.iter().map(|s| knowledge_questions(f.engine, &s.id)).collect::<Result<_, _>>()?;
    let collection = CollectionSample::new(&sampled);
    for (n, (skill, own)) in f.skills.iter().zip(f.engine.skills()).enumerate() {
        for (i, example) in skill.examples.iter().enumerate() {
            // Examples past the SKILL.md's own came from feedback: they form its fold.
            let feedback = i >= own.examples.len();
            let leave_out = Some((skill.id.as_str(), i));
            let probed = f.probe(example, &skills, leave_out)?;
            let mut positive = positive(f.dispatcher.signals_of(&probed, leave_out), &skill.id, false);
            positive.feedback = feedback;
            out.push(positive);
            // No unanswerable twin for a feedback question: worded the same, it would carry the
            // held-out question into the fit of the other folds.
            if !feedback {
                out.extend(unanswerable_twin(f, &skill.id, example, probed, Some(i))?);
            }
        }
        for (k, text) in sampled[n].iter().enumerate() {
            if own.examples.is_empty() {
                // A skill that gives no examples has only its knowledge to show where its
                // questions route: the sentence, made less literal, stands in for one.
                let query = collection.known_item_query(text, n, k);
                let probed = f.probe(&query, &skills, None)?;
                out.push(positive(f.dispatcher.signals_of(&probed, None), &skill.id, true));
            }
            let probed = f.probe(text, &skills, None)?;
            out.extend(
                unanswerable_twin(f, &skill.id, text, probed, None)?
                    .map(|twin| TrainingQuestion { synthetic: true, ..twin }),
            );
        }
    }
    // Everyday questions of other domains as out-of-scope negatives — unless a skill's knowledge
    // covers one as well as it covers its own examples (then it may well be in scope).
    let mut least_own: HashMap<String, f32> = HashMap::new();
    for q in out.iter().filter(|q| q.answerable) {
        if let Some(own) = q.signals.iter().find(|s| q.answer.as_deref() == Some(s.skill.as_str())) {
            let e = least_own.entry(own.skill.clone()).or_insert(f32::MAX);
            *e = e.min(own.knowledge);
        }
    }
    for line in BACKGROUND.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let signals = f.dispatcher.signals_of(&f.probe(line, &skills, None)?, None);
        let in_scope = signals.iter().any(|s| least_own.get(&s.skill).is_some_and(|&min| s.knowledge >= min));
        if !in_scope {
            out.push(TrainingQuestion {
                signals,
                answer: None,
                near_miss: false,
                answerable: false,
                synthetic: false,
                feedback: false,
            });
        }
    }
    // Labelled questions; feedback examples are in their skills' profiles already.
    for l in labelled.iter().filter(|l| !is_feedback_example(l)) {
        if crate::stages::gate::classify(&l.query).is_some() {
            continue;
        }
        let signals = f.dispatcher.signals_of(&f.probe(&l.query, &skills, None)?, None);
        out.push(TrainingQuestion {
            signals,
            answer: l.skill.clone(),
            near_miss: false,
            answerable: l.skill.is_some() && l.answerable,
            synthetic: false,
            feedback: l.feedback,
        });
    }
    Ok(out)
}

/// A question of `skill` that its knowledge answers (an example, or a simulated query from a
/// sampled sentence when `synthetic`), also a near miss for every other skill.
fn positive(signals: Vec<Signals>, skill: &str, synthetic: bool) -> TrainingQuestion {
    TrainingQuestion {
        signals,
        answer: Some(skill.to_string()),
        near_miss: true,
        answerable: true,
        synthetic,
        feedback: false,
    }
}

/// The unanswerable twin of a question of `skill`: every document that covers it about as well
/// as the best one is left out, as when a knowledge base simply lacks the answer. `None` when the
/// skill's search found nothing to leave out.
fn unanswerable_twin(
    f: &Fitting<'_>,
    skill: &str,
    text: &str,
    probed: Probed,
    leave_out: Option<usize>,
) -> Result<Option<TrainingQuestion>, AskError> {
    let Probed { question, prepared, stats, mut probes, shortlist } = probed;
    let Some(own) = probes.get(skill) else { return Ok(None) };
    let removed_sources: Vec<String> =
        own.source_coverages.iter().filter(|(_, c)| *c >= 0.75 * own.best_coverage).map(|(s, _)| s.clone()).collect();
    if removed_sources.is_empty() {
        return Ok(None);
    }
    let index = f.engine.index_of(skill)?;
    let removed_chunks: Vec<_> =
        index.iter().flat_map(|index| removed_sources.iter().flat_map(|s| index.chunks_of(s))).collect();
    // A skill left without any knowledge is no place anyone would route a question to. Such a
    // twin (a one-document skill, or every document answering) would teach the router that the
    // knowledge does not matter: with hundreds of one-article skills, its weight went negative.
    if index.is_some() && removed_chunks.len() as f64 >= stats.chunks_in(skill) {
        return Ok(None);
    }
    let filter = removed_sources.iter().fold(Filter::none(), |f, s| f.excluding(s));
    let options = SearchOptions {
        skills: vec![skill.to_string()],
        k: Some(f.settings.hits),
        filter,
        rerank: false,
        ..Default::default()
    };
    let result = f.engine.search_prepared(text, &prepared, &options)?;
    probes.insert(skill.to_string(), Probe::new(skill, result.hits, &question, &stats));
    let leave_out = leave_out.map(|i| (skill, i));
    let mut signals = f.dispatcher.signals(&question, &stats, &probes, &shortlist, leave_out);
    // Without those documents, the skill's language model loses their chunks and words too.
    if index.is_some() {
        let question_terms: Vec<String> =
            crate::base::evidence::unique(&question.terms).into_iter().chain(stats.phrases_found().cloned()).collect();
        let mut removed: HashMap<&str, u64> = HashMap::new();
        for chunk in &removed_chunks {
            let analyzed = skillrag_text::analyze(&chunk.indexed_text());
            let terms: HashSet<String> =
                phrases(&analyzed).iter().map(|(a, b)| phrase_key(a, b)).chain(analyzed.iter().cloned()).collect();
            for t in question_terms.iter().filter(|t| terms.contains(*t)) {
                *removed.entry(t.as_str()).or_default() += 1;
            }
        }
        if let Some(own) = signals.iter_mut().find(|s| s.skill == skill) {
            let without = SkillModel {
                chunks: (stats.chunks_in(skill) - removed_chunks.len() as f64).max(0.0),
                chunks_with: |t: &str| {
                    stats.count_in(skill, t).saturating_sub(removed.get(t).copied().unwrap_or(0)) as f64
                },
            };
            own.specificity = specificity(&question.terms, &stats, &without);
        }
        crate::stages::route::model::set_specificity_leads(&mut signals);
    }
    Ok(Some(TrainingQuestion {
        signals,
        answer: Some(skill.to_string()),
        near_miss: true,
        answerable: false,
        synthetic: false,
        feedback: false,
    }))
}

/// How many sentences of each skill's knowledge stand in for questions when fitting: up to 16
/// per skill, about 1200 in all with many skills (so `tune` stays fast with hundreds), at least 2.
fn knowledge_questions_per_skill(skills: usize) -> usize {
    (1200 / skills.max(1)).clamp(2, 16)
}

/// Question-sized sentences from documents spread evenly over the skill's sources: stand-ins for
/// questions of the skill's domain (doc2query-style synthetic queries, without a generator). As
/// they are, only their unanswerable twins are used: with its own document present a copied
/// sentence is answered word for word, which no real question is. A skill without examples gets
/// them as positives too, made less literal ([`CollectionSample::known_item_query`]).
fn knowledge_questions(engine: &Engine, skill: &str) -> Result<Vec<String>, AskError> {
    let Some(index) = engine.index_of(skill)? else { return Ok(Vec::new()) };
    let sources: Vec<&String> = index.manifest().files.keys().collect();
    let wanted = knowledge_questions_per_skill(engine.skills().len());
    let step = (sources.len() as f64 / wanted as f64).max(1.0);
    let mut out = Vec::new();
    for k in 0..wanted.min(sources.len()) {
        let source = sources[(k as f64 * step) as usize];
        let picked = index.chunks_of(source).iter().find_map(|chunk| {
            skillrag_chunk::sentences(&chunk.text)
                .into_iter()
                .map(|(_, s)| s)
                .find(|s| question_sized(s))
                .map(str::to_string)
        });
        out.extend(picked);
    }
    Ok(out)
}

/// The terms of the knowledge sentences sampled from every skill: a sample of the whole
/// collection's language model, for simulated queries.
struct CollectionSample {
    /// (skill index, word as written)
    terms: Vec<(usize, String)>,
}

/// The share of a simulated query's terms drawn from the collection rather than the document.
const COLLECTION_SHARE: f64 = 0.3;

impl CollectionSample {
    fn new(sampled: &[Vec<String>]) -> CollectionSample {
        let terms = sampled
            .iter()
            .enumerate()
            .flat_map(|(n, texts)| texts.iter().flat_map(move |t| surface_words(t).into_iter().map(move |w| (n, w))))
            .filter(|(_, w)| w.chars().count() >= 2)
            .collect();
        CollectionSample { terms }
    }

    /// A known-item query for `sentence` (its `k`-th of skill `skill`), after Azzopardi, de Rijke
    /// and Balog (SIGIR 2007): the document's terms mixed with terms of the collection's language
    /// model (here: other skills' sampled sentences), a [`COLLECTION_SHARE`] of them. A copied
    /// sentence is covered word for word by its document, which no real question is; fitted on
    /// such positives alone, the router accepts only questions as literal as they are.
    /// Deterministic: the same knowledge gives the same queries.
    fn known_item_query(&self, sentence: &str, skill: usize, k: usize) -> String {
        use std::hash::{Hash, Hasher};
        let own = skillrag_text::analyze(sentence).len();
        let wanted = (own as f64 * COLLECTION_SHARE / (1.0 - COLLECTION_SHARE)).ceil() as usize;
        let mut query = sentence.to_string();
        let mut added = 0;
        for j in 0..wanted * 4 {
            if added == wanted || self.terms.is_empty() {
                break;
            }
            let mut h = std::collections::hash_map::DefaultHasher::new();
            (skill, k, j).hash(&mut h);
            let (from, term) = &self.terms[(h.finish() % self.terms.len() as u64) as usize];
            if *from != skill {
                query.push(' ');
                query.push_str(term);
                added += 1;
            }
        }
        query
    }
}

/// The words of `text` as written, each one that analyzes to exactly its own term: a query
/// built from them searches for the same terms (a stem such as "degre" would not).
fn surface_words(text: &str) -> Vec<String> {
    skillrag_text::tokens(text)
        .into_iter()
        .filter_map(|t| text.get(t.start..t.end).filter(|w| skillrag_text::analyze(w) == [t.term.as_str()]))
        .map(str::to_string)
        .collect()
}

/// About as long as a question: 10–40 characters of Chinese, or 6–30 words otherwise; not a
/// heading, list marker or table row.
fn question_sized(sentence: &str) -> bool {
    if sentence.starts_with(['#', '|', '-', '*', '>', '[', '!']) {
        return false;
    }
    let cjk = sentence.chars().filter(|c| skillrag_core::is_han_ideograph(*c)).count();
    if cjk > 0 {
        (10..=40).contains(&cjk)
    } else {
        (6..=30).contains(&sentence.split_whitespace().count())
    }
}

#[cfg(test)]
mod tests {
    use super::{question_sized, with_feedback, CollectionSample};
    use crate::base::labelled::LabelledQuestion;

    #[test]
    fn feedback_routes_join_their_skills_examples() {
        let text = "---\nname: tea\ndescription: Brewing tea.\n---\n# Tea\n\n## Examples\n\n- How hot for green tea?\n";
        let tea = skillrag_skill::parse_skill_text(std::path::Path::new("skills/tea"), "tea", text).skill.unwrap();
        let label = |query: &str, skill: Option<&str>, answerable: bool, feedback: bool| LabelledQuestion {
            query: query.into(),
            skill: skill.map(str::to_string),
            answerable,
            feedback,
        };
        let labelled = vec![
            label("How long do I steep oolong?", Some("tea"), true, true),
            label("How long do I steep oolong?", Some("tea"), true, true),
            label("How hot for green tea?", Some("tea"), true, true),
            label("Is there caffeine in rooibos?", Some("tea"), false, true),
            label("What about the weather?", None, false, true),
            label("From a labelled file", Some("tea"), true, false),
            label("For a skill that is gone", Some("coffee"), true, true),
            label("Thanks!", Some("tea"), true, true),
        ];
        let skills = with_feedback(std::slice::from_ref(&tea), &labelled);
        assert_eq!(skills[0].examples, vec!["How hot for green tea?", "How long do I steep oolong?"]);
    }

    #[test]
    fn known_item_queries_mix_in_other_skills_terms() {
        let sampled = vec![
            vec!["Hold the reset button for ten seconds to restore factory settings.".to_string()],
            vec!["Green tea is brewed with water between seventy and eighty degrees.".to_string()],
        ];
        let collection = CollectionSample::new(&sampled);
        let query = collection.known_item_query(&sampled[0][0], 0, 0);
        assert!(query.starts_with(&sampled[0][0]), "{query}");
        let added: Vec<String> = skillrag_text::analyze(&query[sampled[0][0].len()..]);
        let own = skillrag_text::analyze(&sampled[0][0]);
        assert!(!added.is_empty() && added.len() <= own.len(), "{added:?}");
        let other = skillrag_text::analyze(&sampled[1][0]);
        assert!(added.iter().all(|t| other.contains(t)), "only other skills' terms: {added:?}");
        assert_eq!(query, collection.known_item_query(&sampled[0][0], 0, 0), "deterministic");
    }

    #[test]
    fn question_sized_sentences() {
        assert!(question_sized("用人单位自用工之日起即与劳动者建立劳动关系。"));
        assert!(!question_sized("第七条"), "too short");
        assert!(!question_sized(&"劳动合同".repeat(20)), "too long");
        assert!(question_sized("Hold the reset button for ten seconds to restore factory settings."));
        assert!(!question_sized("See Table 2."));
        assert!(!question_sized("| 型号 | 价格 | 说明 | 备注 | 产地 | 颜色 |"), "table row");
        assert!(!question_sized("# 第二章 劳动合同的订立与履行的一般规定"), "heading");
    }
}
