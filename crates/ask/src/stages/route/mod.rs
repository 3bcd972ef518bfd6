//! Route (docs/design.md §4.2): which skill(s) a question belongs to, with a calibrated confidence.
//!
//! Signals per candidate skill: trigger hits (substrings and jieba terms), BM25-weighted term
//! coverage of the question by the skill profile, embedding similarity to the profile (only when
//! the model can see the text), the same two measures against the skill's knowledge (its best
//! chunks), how much more the skill's knowledge uses the question's words than general language
//! ([`selection`], resource selection) and whether the question is in the skill's language (for
//! Chinese, its script too). With many skills only a shortlist is searched. A fitted logistic
//! regression ([`model`]) turns the signals into a confidence; fitted thresholds decide single /
//! multi / ambiguous / none, and the evidence settles an ambiguous pair unless it is tied too.

mod dispatcher;
pub(crate) mod fit;
pub(crate) mod model;
mod probe;
mod profile;
pub(crate) mod selection;

pub(crate) use dispatcher::Dispatcher;
pub use model::RouterModel;
pub(crate) use probe::{probe, search_skill, Probe, Probed};

use crate::base::contract::{Decision, Route, RoutePart};
use crate::base::conversation::FollowUp;
use crate::base::labelled::LabelledQuestion;
use crate::base::question::Question;
use crate::base::settings::AskSettings;
use crate::error::AskError;
use crate::llm::Assist;
use crate::stages::plan::Plan;
use skillrag_core::Language;
use skillrag_engine::{Engine, EngineError};
use std::time::Instant;

/// The router: the dispatcher (every skill's profile) and the model fitted on it. It borrows
/// the engine for each call rather than owning it, so `tune` and the assistant share one.
pub struct Router {
    dispatcher: Dispatcher,
    model: RouterModel,
    /// The labelled questions the model was fitted on (besides the skills' examples).
    labelled: Vec<LabelledQuestion>,
    /// Hits each probe returns.
    hits: usize,
}

/// The route stage's hand-off to retrieval.
pub struct Routed {
    pub route: Route,
    /// The question probed in the skills it could go to; retrieval starts from these probes.
    pub probed: Probed,
    /// Time spent searching those skills: retrieval work, done while routing.
    pub probe_ms: f64,
    /// For a multi route: each skill with its part of the question (its clauses), probed alone.
    pub parts: Vec<PartProbe>,
}

/// A skill's part of a multi-intent question, probed in that skill alone.
pub struct PartProbe {
    pub skill: String,
    pub text: String,
    pub probed: Probed,
}

impl Router {
    /// Builds the skill profiles and loads the fitted model (fitting it from the skills'
    /// examples when it is missing or the skills, settings or indexes changed).
    pub fn open(engine: &Engine, settings: &AskSettings) -> Result<Router, AskError> {
        // router.json is read once: its labelled questions shape the profiles, then the model.
        let saved = fit::read_saved(engine);
        let skills = fit::with_feedback(engine.skills(), &fit::Saved::labelled(saved.as_ref()));
        let dispatcher = Dispatcher::open(engine, &skills, settings.retrieval.min_visibility)?;
        let (model, labelled) = fit::load_or_fit(engine, &dispatcher, &skills, settings, saved)?;
        Ok(Router { dispatcher, model, labelled, hits: settings.hits })
    }

    /// Refits the model on the skills' examples plus `labelled` questions and saves it.
    pub fn refit(
        &mut self,
        engine: &Engine,
        settings: &AskSettings,
        labelled: Vec<LabelledQuestion>,
    ) -> Result<&RouterModel, AskError> {
        // Feedback questions join their skills' profiles: the dispatcher is rebuilt with them.
        let skills = fit::with_feedback(engine.skills(), &labelled);
        self.dispatcher = Dispatcher::open(engine, &skills, settings.retrieval.min_visibility)?;
        self.model = fit::fit_and_save(engine, &self.dispatcher, &skills, settings, labelled.clone())?;
        self.labelled = labelled;
        Ok(&self.model)
    }

    pub fn model(&self) -> &RouterModel {
        &self.model
    }

    pub fn labelled(&self) -> &[LabelledQuestion] {
        &self.labelled
    }

    /// Analyzes `text` and searches `skills` with it (no reranking).
    pub fn probe(&self, engine: &Engine, text: &str, skills: &[String]) -> Result<Probed, EngineError> {
        probe::probe(engine, &self.dispatcher, text, skills, self.hits, None)
    }

    /// The decision for a probed question. An ambiguous one whose parts each clearly belong to
    /// a different accepted skill becomes `multi`; else the skill whose best document covers the
    /// question clearly better answers it (neighbouring skills share words, not documents).
    pub fn decide(&self, engine: &Engine, probed: &Probed) -> Route {
        let signals = self.dispatcher.signals_of(probed, None);
        let mut route = self.dispatcher.decide(&self.model, &signals);
        // A question of several clauses may ask two skills something each: when two skills are
        // close, or when the one it routes to cannot answer it as a whole (one skill's clause can
        // outweigh the other's in the whole question's signals).
        let weak = route.decision == Decision::Single
            && route.candidates.first().is_some_and(|c| !self.model.is_answerable(c.knowledge));
        if route.decision == Decision::Ambiguous || weak {
            if let Some(parts) = self.multi_intent(engine, &probed.question, &probed.shortlist) {
                route.decision = Decision::Multi;
                route.skills = owners(&parts);
                route.parts = parts;
                return route;
            }
        }
        if route.decision == Decision::Ambiguous {
            settle_ambiguity(&mut route, self.model.evidence_margin);
        }
        route
    }

    /// Each clause of the question routed among `skills` alone: the clauses that route to a
    /// single skill, when they go to at least two different skills.
    fn multi_intent(&self, engine: &Engine, question: &Question, skills: &[String]) -> Option<Vec<RoutePart>> {
        let parts = clauses(&question.text);
        if parts.len() < 2 {
            return None;
        }
        let mut routed = Vec::new();
        for part in parts {
            let p = self.probe(engine, &part, skills).ok()?;
            let signals: Vec<_> =
                self.dispatcher.signals_of(&p, None).into_iter().filter(|s| skills.contains(&s.skill)).collect();
            let decided = self.dispatcher.decide(&self.model, &signals);
            // A part must be in its skill's domain, not merely acceptable to it: a stray clause
            // should not split a question.
            if decided.decision == Decision::Single && decided.confidence >= self.model.in_domain {
                routed.push(RoutePart { text: part, skill: decided.skills[0].clone() });
            }
        }
        (owners(&routed).len() >= 2).then_some(routed)
    }

    /// Each skill's part of a multi route (its clauses, joined) probed in that skill alone, so
    /// that the skill is searched for its own part and its evidence measured against it.
    fn probe_parts(&self, engine: &Engine, route: &Route) -> Result<Vec<PartProbe>, EngineError> {
        owners(&route.parts)
            .into_iter()
            .map(|skill| {
                let clauses: Vec<&str> =
                    route.parts.iter().filter(|p| p.skill == skill).map(|p| p.text.as_str()).collect();
                let text = clauses.join(" ");
                let probed = self.probe(engine, &text, std::slice::from_ref(&skill))?;
                Ok(PartProbe { skill, text, probed })
            })
            .collect()
    }

    /// The route stage: the caller's skill, or the previous turn's for a follow-up that does not
    /// clearly leave it, or the dispatcher's decision; an ambiguous one settled by `voter` (the
    /// LLM) when it picks exactly one of the two skills.
    pub fn route(
        &self,
        engine: &Engine,
        plan: &Plan,
        forced: Option<&str>,
        voter: Option<&Assist>,
    ) -> Result<Routed, AskError> {
        let targets = match forced {
            Some(s) => vec![engine.skill(s)?.id.clone()],
            None => engine.skills().iter().map(|s| s.id.clone()).collect(),
        };
        let started = Instant::now();
        let (mut route, probed) = match &plan.follow_up {
            Some(follow_up) => self.route_follow_up(engine, plan, follow_up, forced, &targets)?,
            None => {
                let probed = self.probe(engine, &plan.retrieval_text, &targets)?;
                let route = match forced {
                    Some(s) => forced_route(s),
                    None => self.decide(engine, &probed),
                };
                (route, probed)
            }
        };
        let probe_ms = started.elapsed().as_secs_f64() * 1000.0;
        if let Some(voter) = voter.filter(|_| route.decision == Decision::Ambiguous) {
            settle_by_vote(engine, voter, &mut route, &probed.question.text, plan.language);
        }
        let parts = match route.decision {
            Decision::Multi if forced.is_none() => self.probe_parts(engine, &route)?,
            _ => Vec::new(),
        };
        Ok(Routed { route, probed, probe_ms, parts })
    }
}

impl Router {
    /// A follow-up's route and the probe retrieval starts from. It is routed alone first: it
    /// keeps the previous topic unless it clearly leaves it (or the caller fixed a skill). Then
    /// it borrows terms only from earlier turns routed to the skill it went to, and only when
    /// they help there ([`Router::borrowing_helps`]).
    fn route_follow_up(
        &self,
        engine: &Engine,
        plan: &Plan,
        follow_up: &FollowUp,
        forced: Option<&str>,
        targets: &[String],
    ) -> Result<(Route, Probed), AskError> {
        let alone = self.probe(engine, &plan.question, targets)?;
        let mut in_topic = None;
        let route = match forced {
            Some(s) => forced_route(s),
            None => {
                let decided = self.decide(engine, &alone);
                if leaves_topic(&decided, follow_up, self.model.accept) {
                    decided
                } else {
                    let probed = self.probe(engine, &plan.retrieval_text, targets)?;
                    let route = keep_topic(self.decide(engine, &probed), follow_up);
                    in_topic = Some(probed);
                    route
                }
            }
        };
        let Some(terms) = follow_up.terms_for(&route.skills).filter(|t| !t.is_empty()) else {
            return Ok((route, alone));
        };
        // The topic's own wording (an LLM's standalone rewrite, or its terms); another skill's
        // terms never, so a rewrite of the whole conversation is used only on the topic.
        let in_context = match (in_topic, route.skills == follow_up.skills) {
            (Some(probed), _) => probed,
            (None, true) => self.probe(engine, &plan.retrieval_text, &route.skills)?,
            (None, false) => self.probe(engine, &format!("{} {}", terms.join(" "), plan.question), &route.skills)?,
        };
        // The LLM's standalone rewrite is the question with its reference resolved, not borrowed
        // terms: on the topic it was written for, it is what is searched.
        let rewrite_on_topic = plan.rewritten && route.skills == follow_up.skills;
        let helps = rewrite_on_topic
            || route.skills.iter().all(|skill| self.borrowing_helps(follow_up, &alone, &in_context, skill));
        Ok((route, if helps { in_context } else { alone }))
    }

    /// Whether the terms a follow-up borrowed help in `skill`. Searched with them, the evidence
    /// must pass (retrieval judges it against the whole text searched, borrowed terms included:
    /// "那红茶呢？" with a green-tea question's terms finds no chunk that has both teas). And the
    /// best chunk must cover the follow-up's own words (weighted by rarity) at least as well as
    /// the best one found without them: borrowed terms that push its own subject out
    /// ("那经济补偿呢？" after a probation question, finding the probation article again) do
    /// not help. A follow-up that points back with a pronoun cannot stand alone, so that test
    /// is skipped for it. A tie keeps them: the earlier turn then narrows among chunks that
    /// serve the follow-up equally ("那试用期呢？" after a question on dismissal).
    fn borrowing_helps(&self, follow_up: &FollowUp, alone: &Probed, in_context: &Probed, skill: &str) -> bool {
        let Some(probe) = in_context.probes.get(skill) else { return false };
        if !self.model.is_answerable(probe.best_coverage) {
            return false;
        }
        let own = |probed: &Probed| {
            let hits: Vec<_> = probed.probes.get(skill).and_then(|p| p.hits.first()).cloned().into_iter().collect();
            Probe::new(skill, hits, &alone.question, &alone.stats).coverages.first().copied().unwrap_or(0.0)
        };
        follow_up.refers_back || own(in_context) >= own(alone)
    }
}

/// Whether a follow-up leaves the previous topic: the question alone routes to another skill
/// *and* the previous one would not accept it. A short follow-up ("那两年呢？") says too little to
/// leave the topic on its own.
fn leaves_topic(alone: &Route, follow_up: &FollowUp, accept: f32) -> bool {
    let previous_fits = alone.candidates.iter().any(|c| follow_up.skills.contains(&c.skill) && c.score >= accept);
    alone.decision == Decision::Single && !follow_up.skills.contains(&alone.skills[0]) && !previous_fits
}

/// The follow-up's route: the previous turn's skills, with the signals of the question in context.
fn keep_topic(mut route: Route, follow_up: &FollowUp) -> Route {
    route.skills = follow_up.skills.clone();
    route.decision = if follow_up.skills.len() > 1 { Decision::Multi } else { Decision::Single };
    route
}

/// An ambiguous route between two skills becomes the better-evidenced one when their best
/// documents' coverage of the question is not tied.
fn settle_ambiguity(route: &mut Route, margin: f32) {
    let candidate = |skill: &str| route.candidates.iter().find(|c| c.skill == skill);
    let knowledge = |skill: &str| candidate(skill).map_or(0.0, |c| c.knowledge);
    let [first, second] = route.skills.as_slice() else { return };
    let Some(first_wins) = model::settle_by_evidence(knowledge(first), knowledge(second), margin) else { return };
    let winner = if first_wins { first.clone() } else { second.clone() };
    route.confidence = candidate(&winner).map_or(route.confidence, |c| c.score);
    route.skills = vec![winner];
    route.decision = Decision::Single;
}

/// The skills of the parts, in order of first appearance.
fn owners(parts: &[RoutePart]) -> Vec<String> {
    let mut owners: Vec<String> = Vec::new();
    for part in parts {
        if !owners.contains(&part.skill) {
            owners.push(part.skill.clone());
        }
    }
    owners
}

/// The route of a question for a skill the caller named.
fn forced_route(skill: &str) -> Route {
    Route {
        skills: vec![skill.to_string()],
        confidence: 1.0,
        decision: Decision::Single,
        forced: true,
        ..Route::none()
    }
}

/// The LLM as a third routing signal: between two about equally likely skills, the one it
/// picks (when it picks exactly one of them) settles the route. Any other reply — both,
/// neither, another skill, junk — leaves the route ambiguous.
fn settle_by_vote(engine: &Engine, voter: &Assist, route: &mut Route, question: &str, language: Language) {
    let candidates: Vec<(String, String)> = route
        .skills
        .iter()
        .filter_map(|id| engine.skill(id).ok().map(|s| (s.id.clone(), s.description.clone())))
        .collect();
    let Some(vote) = voter.route_vote(question, &candidates, language) else { return };
    if let [picked] = vote.as_slice() {
        route.skills = vec![picked.clone()];
        route.decision = Decision::Single;
    }
    route.llm_vote = Some(vote);
}

/// Splits a question into the parts that may each ask something different (multi-intent).
pub fn clauses(question: &str) -> Vec<String> {
    let mut parts = vec![question.to_string()];
    for sep in ["另外", "还有", "此外", "以及", "顺便问一下", "顺便问下", " also ", " Also "] {
        parts = parts.iter().flat_map(|p| p.split(sep).map(str::to_string).collect::<Vec<_>>()).collect();
    }
    parts = parts
        .iter()
        .flat_map(|p| {
            p.split_inclusive(['？', '?', '；', ';', '。', '！', '!']).map(str::to_string).collect::<Vec<_>>()
        })
        .collect();
    parts
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| p.chars().filter(|c| c.is_alphanumeric()).count() >= 4)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_clauses() {
        assert_eq!(clauses("试用期最长多久？另外，年休假有几天？"), vec!["试用期最长多久？", "，年休假有几天？"]);
        assert_eq!(clauses("What is R0? Also, how do I reset the router?").len(), 2);
        assert_eq!(clauses("试用期最长多久").len(), 1);
    }

    #[test]
    fn neighbouring_skills_are_settled_by_their_evidence_unless_it_is_tied() {
        let ambiguous = |labor: f32, contract: f32| {
            let mut route = routed(Decision::Ambiguous, &["contract", "labor"], &[("contract", 0.95), ("labor", 0.9)]);
            for c in &mut route.candidates {
                c.knowledge = if c.skill == "labor" { labor } else { contract };
            }
            settle_ambiguity(&mut route, 0.1);
            route
        };
        let settled = ambiguous(0.75, 0.3);
        assert_eq!((settled.decision, settled.skills.clone()), (Decision::Single, vec!["labor".to_string()]));
        assert!((settled.confidence - 0.9).abs() < 1e-6, "the winner's own confidence");
        assert_eq!(ambiguous(0.3, 0.75).skills, vec!["contract".to_string()]);
        let tied = ambiguous(0.5, 0.45);
        assert_eq!((tied.decision, tied.skills.len()), (Decision::Ambiguous, 2), "tied evidence: ask");
    }

    fn routed(decision: Decision, skills: &[&str], candidates: &[(&str, f32)]) -> Route {
        let skills = skills.iter().map(|s| s.to_string()).collect();
        let candidates = candidates
            .iter()
            .map(|(skill, score)| crate::base::contract::Candidate {
                skill: skill.to_string(),
                score: *score,
                keyword_hits: vec![],
                dense: None,
                profile: 0.0,
                specificity: 0.0,
                knowledge: 0.0,
                knowledge_dense: None,
                language_match: true,
            })
            .collect();
        Route { skills, decision, candidates, ..Route::none() }
    }

    fn follow_up(skill: &str) -> FollowUp {
        FollowUp { skills: vec![skill.into()], ..FollowUp::default() }
    }

    #[test]
    fn a_follow_up_leaves_the_topic_only_for_a_skill_that_owns_it() {
        let tea = routed(Decision::Single, &["tea"], &[("tea", 0.9), ("labor", 0.1)]);
        assert!(leaves_topic(&tea, &follow_up("labor"), 0.5), "another skill owns it alone");
        let both = routed(Decision::Single, &["tea"], &[("tea", 0.9), ("labor", 0.6)]);
        assert!(!leaves_topic(&both, &follow_up("labor"), 0.5), "the previous skill would accept it too");
        let same = routed(Decision::Single, &["labor"], &[("labor", 0.9)]);
        assert!(!leaves_topic(&same, &follow_up("labor"), 0.5));
        let nothing = routed(Decision::None, &[], &[("tea", 0.2)]);
        assert!(!leaves_topic(&nothing, &follow_up("labor"), 0.5), "too little to leave the topic");
        let kept = keep_topic(nothing, &follow_up("labor"));
        assert_eq!((kept.decision, kept.skills), (Decision::Single, vec!["labor".to_string()]));
        let two = FollowUp { skills: vec!["a".into(), "b".into()], ..FollowUp::default() };
        assert_eq!(keep_topic(routed(Decision::None, &[], &[]), &two).decision, Decision::Multi);
    }

    #[test]
    fn the_skills_of_a_multi_route_in_order() {
        let part = |t: &str, s: &str| RoutePart { text: t.into(), skill: s.into() };
        assert_eq!(owners(&[part("x", "a"), part("y", "b"), part("z", "a")]), vec!["a".to_string(), "b".to_string()]);
        assert_eq!(owners(&[part("x", "a"), part("y", "a")]), vec!["a".to_string()]);
    }
}
