//! The one module that writes an [`Answer`] (and a [`TaskContext`]): each stage returns a value,
//! and the functions here put it into the answer the user reads, in the order the stages ran.
//! Keeping every field write here means a new stage (a reader model) changes one place.

use crate::base::citation_labels::label_citations;
use crate::base::contract::{Answer, CitedPicture, Context, GateKind, PlanStep, ReaderInfo, Refusal};
use crate::stages::answer::{Outcome, Reply};
use crate::stages::gate;
use crate::stages::retrieve::Retrieval;
use crate::stages::route::Routed;
use crate::stages::task::{brief, TaskContext};
use skillrag_engine::Engine;

/// A gated request: the gate's route and its reply (fixed, or the LLM's).
pub fn gated(answer: &mut Answer, kind: GateKind, reply: Reply) {
    answer.route = gate::gated_route(kind);
    answer.answer = reply.text;
    answer.generation = reply.generation;
    answer.warnings.extend(reply.warning);
}

/// The gate's time; for a gated turn, the whole turn's.
pub fn gate_timed(answer: &mut Answer, gate_ms: f64, gated: bool) {
    answer.timings_ms.gate = gate_ms;
    if gated {
        answer.timings_ms.total = gate_ms;
    }
}

/// The route stage's decision, its time (less the probes', which are retrieval work) and the
/// probes' notices, once each.
pub fn routed(answer: &mut Answer, routed: &Routed, route_ms: f64) {
    route_only(answer, routed, route_ms);
    let mut notices: Vec<String> = routed.probed.probes.values().filter_map(|p| p.notice.clone()).collect();
    notices.sort();
    notices.dedup();
    answer.warnings.extend(notices);
}

/// Only the route (a task context's turn, which logs no notices).
pub fn route_only(answer: &mut Answer, routed: &Routed, route_ms: f64) {
    answer.route = routed.route.clone();
    answer.timings_ms.route = route_ms - routed.probe_ms;
}

/// A refusal (its message becomes the answer text in [`finish`]).
pub fn refused(answer: &mut Answer, refusal: Refusal) {
    answer.refusal = Some(refusal);
}

/// What retrieval found; the hits move into the answer. `retrieve_ms` counts the routing
/// probes, the question's first search.
pub fn retrieved(answer: &mut Answer, retrieval: &mut Retrieval, retrieve_ms: f64) {
    answer.retrieved = true;
    answer.attempts = retrieval.attempts;
    answer.queries = std::mem::take(&mut retrieval.queries);
    answer.warnings.append(&mut retrieval.warnings);
    answer.hits = std::mem::take(&mut retrieval.hits);
    answer.timings_ms.retrieve = retrieve_ms;
}

/// A compare question's sides: one plan step each, the queries, attempts, warnings and hits (a
/// chunk two sides found, once). Returns the skills whose evidence stayed weak.
pub fn sides(
    answer: &mut Answer,
    queries: &[String],
    sides: &[(Routed, Retrieval)],
    routed_skill: &str,
    retrieve_ms: f64,
) -> Vec<String> {
    answer.retrieved = true;
    answer.timings_ms.retrieve = retrieve_ms;
    let mut weak = Vec::new();
    for (step, (query, (_, retrieval))) in queries.iter().zip(sides).enumerate() {
        let skill = retrieval.hits.first().map_or(routed_skill, |h| h.skill.as_str());
        answer.plan.push(PlanStep { step: step + 1, skill: skill.to_string(), query: query.clone() });
        answer.attempts = answer.attempts.max(retrieval.attempts);
        for q in &retrieval.queries {
            if !answer.queries.contains(q) {
                answer.queries.push(q.clone());
            }
        }
        answer.warnings.extend(retrieval.warnings.iter().cloned());
        weak.extend(retrieval.weak_skills.iter().cloned());
        for hit in &retrieval.hits {
            if !answer.hits.iter().any(|h| h.skill == hit.skill && h.chunk_id == hit.chunk_id) {
                answer.hits.push(hit.clone());
            }
        }
    }
    weak.sort();
    weak.dedup();
    weak
}

/// The compiled context.
pub fn compiled(answer: &mut Answer, context: Context) {
    answer.context = context;
}

/// The answer stage's outcome; `not_found` makes the refusal for weak evidence. Each citation is
/// labelled by what its passage holds, and each citation of a picture carries where to get it and its size, as its skill's served index records them.
pub fn answered(
    answer: &mut Answer,
    (outcome, read): (Outcome, Option<ReaderInfo>),
    engine: &Engine,
    not_found: impl FnOnce() -> Refusal,
) {
    answer.reader = read;
    match outcome {
        Outcome::Written { text, citations, generation } => {
            answer.answer = text;
            answer.citations = citations;
            answer.generation = Some(generation);
        }
        Outcome::NotFound { generation } => {
            answer.generation = generation;
            answer.refusal = Some(not_found());
        }
        Outcome::Extracted { text, citations, generation, warning } => {
            answer.answer = text;
            answer.citations = citations;
            answer.generation = generation;
            answer.warnings.extend(warning);
        }
    }
    label_citations(&mut answer.citations, &answer.context.pieces);
    for c in &mut answer.citations {
        c.image = engine.picture(&c.skill, &c.source).map(|p| CitedPicture {
            path: p.source,
            width: p.width,
            height: p.height,
            bytes: p.bytes,
        });
    }
}

/// The answer stage's time.
pub fn generate_timed(answer: &mut Answer, generate_ms: f64) {
    answer.timings_ms.generate = generate_ms;
}

/// A warning for the user (the conversation's LLM budget is spent…).
pub fn warned(answer: &mut Answer, warning: Option<String>) {
    answer.warnings.extend(warning);
}

/// The finished answer: the total time, and a refusal's message as the answer text.
pub fn finish(mut answer: Answer, total_ms: f64) -> Answer {
    answer.timings_ms.total = total_ms;
    if let Some(r) = &answer.refusal {
        answer.answer = r.message.clone();
    }
    answer
}

/// A task's context from the turn that compiled it, with the briefs of `skills`.
pub fn task_context(engine: &Engine, answer: Answer, skills: Vec<String>) -> TaskContext {
    let skills = skills.iter().filter_map(|id| engine.skill(id).ok()).map(brief).collect();
    TaskContext {
        task: answer.query,
        route: answer.route,
        refusal: answer.refusal,
        skills,
        context: answer.context,
        warnings: answer.warnings,
        timings_ms: answer.timings_ms,
    }
}
