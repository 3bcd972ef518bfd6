//! The dispatcher: each skill's signals for a question, and the decision the fitted model makes
//! from them (single / ambiguous / none; multi-intent is settled by the [`Router`](super::Router)).

use super::model::{set_specificity_leads, RouterModel, Signals};
use super::probe::{Probe, Probed};
use super::profile::SkillProfile;
use super::selection::specificity;
use crate::base::contract::{Candidate, Decision, Route};
use crate::base::evidence::{coverage, TermStats};
use crate::base::question::Question;
use skillrag_engine::reciprocal_rank_fusion;
use skillrag_engine::{Engine, EngineError};
use skillrag_skill::Skill;
use skillrag_store::EmbeddingCache;
use std::collections::{HashMap, HashSet};

/// How many skills a question is searched in at least. Up to this many, all of them; beyond,
/// the ones the compact statistics rank highest ([`shortlist_size`]).
pub const SHORTLIST: usize = 8;

/// The most skills a question is searched in, however many there are.
pub const SHORTLIST_MAX: usize = 32;

/// How many of `skills` a question is searched in: all up to [`SHORTLIST`], then √n up to
/// [`SHORTLIST_MAX`]. The compact statistics rank the right skill lower as the federation grows
/// (one-file skills that share their everyday words), so a fixed shortlist loses recall: at 1000
/// one-file skills 8 held the right skill for 0.83 of the questions and 32 for 0.94
/// (`bench/results/thousand-skills.md`). Growing with √n keeps the searches per question sublinear.
pub fn shortlist_size(skills: usize) -> usize {
    let root = (skills as f64).sqrt().ceil() as usize;
    root.clamp(SHORTLIST, SHORTLIST_MAX).min(skills)
}

/// The profiles of every skill.
pub struct Dispatcher {
    pub profiles: Vec<SkillProfile>,
}

impl Dispatcher {
    /// Every skill's profile, with its description and examples embedded (through the
    /// embedding cache) when a model is configured. `skills` are the engine's, their examples
    /// extended by the questions users' feedback assigned to them ([`crate::stages::route::fit::with_feedback`]).
    pub fn open(engine: &Engine, skills: &[Skill], min_visibility: f32) -> Result<Dispatcher, EngineError> {
        let mut profiles: Vec<SkillProfile> = skills.iter().map(SkillProfile::new).collect();
        if let Some(embedder) = engine.embedder()? {
            let state = engine.project.state_dir().join("cache/embeddings");
            let mut cache = EmbeddingCache::open(&state, embedder.model_id(), embedder.dim()).ok();
            for (profile, skill) in profiles.iter_mut().zip(skills) {
                profile.embed(skill, embedder.as_ref(), cache.as_mut(), min_visibility).map_err(EngineError::Embed)?;
            }
        }
        Ok(Dispatcher { profiles })
    }

    /// The skills of `skills` worth searching for `question`: every one when there are at most
    /// [`SHORTLIST`], else the [`shortlist_size`] best by the fused ranks of the signals that need
    /// no search (specificity; triggers and profile words; profile embedding). Resource selection from
    /// per-skill statistics first, evidence from a shortlist second.
    pub fn shortlist(
        &self,
        question: &Question,
        stats: &TermStats,
        skills: &[String],
        leave_out: Option<(&str, usize)>,
    ) -> Vec<String> {
        let wanted: HashSet<&str> = skills.iter().map(String::as_str).collect();
        let considered: Vec<&SkillProfile> =
            self.profiles.iter().filter(|p| wanted.contains(p.skill.as_str())).collect();
        let size = shortlist_size(considered.len());
        if considered.len() <= size {
            return considered.iter().map(|p| p.skill.clone()).collect();
        }
        let skip = |p: &SkillProfile| leave_out.filter(|(s, _)| *s == p.skill).map(|(_, i)| i);
        // A ranking lists only the skills its signal says something about: skills tied at zero
        // profile words would otherwise take ranks in the order they were loaded, and with
        // hundreds of skills those free ranks outweigh the one signal that found the right skill.
        let ranked = |score: &dyn Fn(&SkillProfile) -> f32, informative: fn(f32) -> bool| -> Vec<usize> {
            let mut order: Vec<(usize, f32)> =
                considered.iter().enumerate().map(|(i, p)| (i, score(p))).filter(|&(_, s)| informative(s)).collect();
            order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            order.into_iter().map(|(i, _)| i).collect()
        };
        let by_specificity =
            ranked(&|p| specificity(&question.terms, stats, &stats.skill_model(&p.skill)), |s| s.is_finite());
        let by_profile = ranked(
            &|p| p.trigger_hits(question).len() as f32 + coverage(&question.terms, stats, |t| p.has_term(t, skip(p))),
            |s| s > 0.0,
        );
        let by_dense = question
            .vector
            .as_ref()
            .map(|v| ranked(&|p| p.dense_similarity(v, skip(p)).unwrap_or(f32::NAN), |s| s.is_finite()));
        let lists = [Some(by_specificity), Some(by_profile), by_dense].into_iter().flatten().map(|l| (1.0, l));
        reciprocal_rank_fusion(lists, 60.0).into_iter().take(size).map(|(i, _)| considered[i].skill.clone()).collect()
    }

    /// Signals of `question` for the skills of `shortlist`. `leave_out` = (skill, example index)
    /// removes one example from its own profile, for fitting on the examples themselves.
    pub fn signals(
        &self,
        question: &Question,
        stats: &TermStats,
        probes: &HashMap<String, Probe>,
        shortlist: &[String],
        leave_out: Option<(&str, usize)>,
    ) -> Vec<Signals> {
        let mut signals: Vec<Signals> = self
            .profiles
            .iter()
            .filter(|p| shortlist.contains(&p.skill))
            .map(|p| {
                let skip = leave_out.filter(|(s, _)| *s == p.skill).map(|(_, i)| i);
                let probe = probes.get(&p.skill);
                Signals {
                    skill: p.skill.clone(),
                    keyword_hits: p.trigger_hits(question),
                    profile: coverage(&question.terms, stats, |t| p.has_term(t, skip)),
                    dense: question.vector.as_ref().and_then(|v| p.dense_similarity(v, skip)),
                    specificity: specificity(&question.terms, stats, &stats.skill_model(&p.skill)),
                    specificity_lead: 0.0,
                    knowledge: probe.map_or(0.0, |p| p.best_coverage),
                    knowledge_dense: probe.and_then(|p| p.best_dense),
                    language_match: p.writes_like(question),
                }
            })
            .collect();
        set_specificity_leads(&mut signals);
        signals
    }

    /// [`Dispatcher::signals`] of a probed question, for the skills it was searched in.
    pub fn signals_of(&self, probed: &Probed, leave_out: Option<(&str, usize)>) -> Vec<Signals> {
        self.signals(&probed.question, &probed.stats, &probed.probes, &probed.shortlist, leave_out)
    }

    /// The decision for signals already computed.
    pub fn decide(&self, model: &RouterModel, signals: &[Signals]) -> Route {
        let mut candidates: Vec<Candidate> = signals
            .iter()
            .map(|s| Candidate {
                skill: s.skill.clone(),
                score: model.confidence(s),
                keyword_hits: s.keyword_hits.clone(),
                dense: s.dense,
                profile: s.profile,
                specificity: s.specificity,
                knowledge: s.knowledge,
                knowledge_dense: s.knowledge_dense,
                language_match: s.language_match,
            })
            .collect();
        candidates.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.skill.cmp(&b.skill)));
        let top = candidates.first().map_or(0.0, |c| c.score);
        let second = candidates.get(1).map_or(0.0, |c| c.score);
        let (decision, skills) = if candidates.is_empty() || top < model.accept {
            (Decision::None, Vec::new())
        } else if second >= model.in_domain && top - second < model.margin {
            (Decision::Ambiguous, vec![candidates[0].skill.clone(), candidates[1].skill.clone()])
        } else {
            (Decision::Single, vec![candidates[0].skill.clone()])
        };
        Route { skills, confidence: top, decision, candidates, ..Route::none() }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A model whose confidence follows the knowledge signal alone: sigmoid(10·knowledge − 5).
    pub(crate) fn knowledge_model() -> RouterModel {
        let mut weights = vec![0.0; super::super::model::FEATURES];
        weights[5] = 10.0;
        RouterModel {
            feature_names: super::super::model::FEATURE_NAMES.iter().map(|s| s.to_string()).collect(),
            weights,
            bias: -5.0,
            accept: 0.5,
            in_domain: 0.7,
            margin: 0.05,
            evidence: 0.5,
            evidence_margin: 0.1,
            fingerprint: String::new(),
            report: Default::default(),
        }
    }

    pub(crate) fn signals(skill: &str, knowledge: f32) -> Signals {
        Signals {
            skill: skill.into(),
            keyword_hits: vec![],
            profile: 0.0,
            dense: None,
            specificity: 0.0,
            specificity_lead: 0.0,
            knowledge,
            knowledge_dense: None,
            language_match: true,
        }
    }

    fn decide(signals: &[Signals]) -> (Decision, Vec<String>) {
        let route = Dispatcher { profiles: vec![] }.decide(&knowledge_model(), signals);
        (route.decision, route.skills)
    }

    #[test]
    fn single_ambiguous_and_none_from_signals() {
        let one = |s: &str| vec![s.to_string()];
        assert_eq!(decide(&[signals("a", 0.9), signals("b", 0.2)]), (Decision::Single, one("a")));
        assert_eq!(decide(&[signals("b", 0.2), signals("a", 0.9)]), (Decision::Single, one("a")), "order-free");
        // Two in-domain skills within the margin: ask which.
        let close = decide(&[signals("a", 0.9), signals("b", 0.88)]);
        assert_eq!(close, (Decision::Ambiguous, vec!["a".to_string(), "b".to_string()]));
        // Close, but the second is not in the domain: the first wins.
        assert_eq!(decide(&[signals("a", 0.6), signals("b", 0.58)]), (Decision::Single, one("a")));
        // Nothing reaches `accept`.
        assert_eq!(decide(&[signals("a", 0.3), signals("b", 0.2)]), (Decision::None, vec![]));
        assert_eq!(decide(&[]), (Decision::None, vec![]));
    }

    #[test]
    fn the_shortlist_grows_with_the_square_root_of_the_skills_within_its_bounds() {
        let sizes: Vec<usize> = [3, 8, 9, 64, 100, 300, 1000, 5000].map(shortlist_size).to_vec();
        assert_eq!(sizes, [3, 8, 8, 8, 10, 18, 32, 32]);
    }

    #[test]
    fn candidates_carry_their_signals_best_first() {
        let route = Dispatcher { profiles: vec![] }.decide(&knowledge_model(), &[signals("b", 0.2), signals("a", 0.9)]);
        let order: Vec<&str> = route.candidates.iter().map(|c| c.skill.as_str()).collect();
        assert_eq!(order, ["a", "b"]);
        assert_eq!(route.candidates[0].knowledge, 0.9);
        assert!((route.confidence - route.candidates[0].score).abs() < 1e-6);
    }
}
