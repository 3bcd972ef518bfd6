//! The ask path (DESIGN.md §4): gate → route → retrieve → filter → loop → compile → answer.
//!
//! [`Assistant`] wraps an [`Engine`] with the dispatcher and its fitted [`RouterModel`]. Every
//! question ends in an [`Answer`]: an extractive answer with citations, or a typed [`Refusal`]
//! (`out_of_scope`, `not_found`, `ambiguous`, `boundary`) in the question's language.

pub mod answer;
mod assist;
mod boundary;
pub mod compile;
mod conversation;
pub mod evidence;
mod extract;
pub mod gaps;
pub mod gate;
pub mod generate;
pub mod llm;
mod retrieve;
pub mod route;
mod tune;

pub use answer::{Answer, Candidate, Citation, Context, Decision, GenerationInfo, Refusal, RefusalKind, Route};
pub use conversation::Conversation;
pub use gaps::{Gap, GapLog, GapRecord};
pub use tune::{read_labelled, LabelledQuestion, TuneError};

use evidence::TermStats;
use generate::Fallback;
use route::model::RouterModel;
use route::profile::SkillProfile;
use route::{Dispatcher, Probe, Question};
use skillrag_core::{Hit, Language};
use skillrag_engine::{Engine, EngineError, SearchOptions};
use skillrag_generate::Generator;
use skillrag_store::hybrid::Mode;
use skillrag_store::EmbeddingCache;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

#[derive(Debug, thiserror::Error)]
pub enum AskError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("the question is empty")]
    Empty,
    #[error(transparent)]
    Tune(#[from] TuneError),
    /// The configured LLM cannot be set up (a missing GGUF file, a bad URL).
    #[error("LLM: {0}")]
    Llm(#[from] skillrag_generate::GenerateError),
}

/// Per-question options.
#[derive(Debug, Clone, Default)]
pub struct AskOptions {
    /// Answer from this skill only (no routing).
    pub skill: Option<String>,
    /// Echoed back in the answer (batch mode).
    pub id: Option<String>,
}

/// A question analyzed and searched in some skills.
pub(crate) struct Probed {
    pub question: Question,
    pub prepared: skillrag_store::hybrid::Query,
    pub stats: TermStats,
    pub probes: HashMap<String, Probe>,
}

/// Questions longer than this are cut (with a note in the trace) before analysis.
const MAX_QUESTION_CHARS: usize = 2000;

/// A project ready to answer questions.
pub struct Assistant {
    pub engine: Engine,
    dispatcher: Dispatcher,
    model: RouterModel,
    labelled: Vec<LabelledQuestion>,
    /// Where `not_found` and `out_of_scope` questions are logged; `None` = not logged.
    gaps: Option<GapLog>,
    /// Writes answers from the context; `None` = extractive answers.
    generator: Option<Arc<dyn Generator>>,
    /// The LLM-assisted steps (rewriting, multi-query, HyDE, routing, clarifying), each on
    /// when its `[llm]` switch is; `None` without an LLM.
    assist: Option<assist::Assist>,
}

impl Assistant {
    /// Builds the skill profiles and loads the fitted router (fitting it from the skills' examples
    /// when it is missing or the skills, settings or indexes changed).
    pub fn open(engine: Engine) -> Result<Assistant, AskError> {
        let generator = llm::open_generator(&engine)?;
        Assistant::open_with(engine, generator)
    }

    /// [`Assistant::open`] with an LLM already loaded (or none): a server reopening the project
    /// on a new index generation keeps its model.
    pub fn open_with(engine: Engine, generator: Option<Arc<dyn Generator>>) -> Result<Assistant, AskError> {
        let mut profiles: Vec<SkillProfile> = engine.skills().iter().map(SkillProfile::new).collect();
        if let Some(embedder) = engine.embedder()? {
            let state = engine.project.state_dir().join("cache/embeddings");
            let mut cache = EmbeddingCache::open(&state, embedder.model_id(), embedder.dim()).ok();
            let min_visibility = engine.project.config.retrieval.min_visibility;
            for (profile, skill) in profiles.iter_mut().zip(engine.skills()) {
                profile
                    .embed(skill, embedder.as_ref(), cache.as_mut(), min_visibility)
                    .map_err(|e| AskError::Engine(EngineError::Embed(e)))?;
            }
        }
        let dispatcher = Dispatcher { profiles };
        let gaps = engine.project.config.ask.gaps.then(|| GapLog::new(&engine.project.state_dir()));
        let assist = generator
            .as_ref()
            .map(|g| assist::Assist::new(g.clone(), Some(engine.project.state_dir().join("cache/llm-assist.jsonl"))));
        let mut assistant =
            Assistant { engine, dispatcher, model: tune::untrained(), labelled: Vec::new(), gaps, generator, assist };
        let (model, labelled) = tune::load_or_fit(&assistant)?;
        assistant.model = model;
        assistant.labelled = labelled;
        Ok(assistant)
    }

    /// Stops logging unanswered questions (evaluation runs should not fill the gaps log).
    pub fn without_gap_log(mut self) -> Assistant {
        self.gaps = None;
        self
    }

    /// Answers extractively even when an LLM is configured.
    pub fn without_llm(mut self) -> Assistant {
        self.generator = None;
        self.assist = None;
        self
    }

    /// The LLM that writes answers, when one is configured.
    pub fn generator(&self) -> Option<&Arc<dyn Generator>> {
        self.generator.as_ref()
    }

    /// The log of unanswered questions, when logging is on.
    pub fn gap_log(&self) -> Option<&GapLog> {
        self.gaps.as_ref()
    }

    pub fn router(&self) -> &RouterModel {
        &self.model
    }

    /// Refits the router on the skills' examples plus `labelled` questions and saves it.
    pub fn tune(&mut self, labelled: Vec<LabelledQuestion>) -> Result<&RouterModel, AskError> {
        self.model = tune::fit_and_save(self, labelled.clone())?;
        self.labelled = labelled;
        Ok(&self.model)
    }

    /// The labelled questions the router was fitted on (besides the skills' examples).
    pub fn labelled(&self) -> &[LabelledQuestion] {
        &self.labelled
    }

    fn indexes(&self) -> Result<Vec<evidence::NamedIndex>, EngineError> {
        let mut out = Vec::new();
        for skill in self.engine.skills() {
            if let Some(index) = self.engine.index_of(&skill.id)? {
                out.push((skill.id.clone(), index));
            }
        }
        Ok(out)
    }

    /// Analyzes (and, when visible, embeds) a question and searches the given skills with it.
    pub(crate) fn probe(&self, text: &str, skills: &[String]) -> Result<Probed, EngineError> {
        let prepared = self.engine.prepare_query(text, Mode::Hybrid)?;
        let question = Question::new(text, prepared.terms.clone(), prepared.vector.clone());
        let indexes = self.indexes()?;
        let stats = TermStats::collect(&indexes, &question.terms)?;
        let hits = self.engine.project.config.ask.hits;
        let mut probes = HashMap::new();
        for (skill, _) in indexes.iter().filter(|(s, _)| skills.contains(s)) {
            let probe = self.search_skill(skill, &question, &prepared, &stats, hits, false)?;
            probes.insert(skill.clone(), probe);
        }
        Ok(Probed { question, prepared, stats, probes })
    }

    /// Searches one skill with a prepared question. Routing probes every skill without the
    /// reranker (a cross-encoder call per skill and per routing example would be the costliest
    /// step); the routed skill's retrieval is reranked.
    fn search_skill(
        &self,
        skill: &str,
        question: &Question,
        prepared: &skillrag_store::hybrid::Query,
        stats: &TermStats,
        hits: usize,
        rerank: bool,
    ) -> Result<Probe, EngineError> {
        let options = SearchOptions { skills: vec![skill.to_string()], k: Some(hits), rerank, ..Default::default() };
        let result = self.engine.search_prepared(&question.text, prepared, &options)?;
        let mut probe = Probe::new(skill, result.hits, question, stats);
        if let Some(s) = result.skills.first() {
            probe.dense_used = s.dense_used;
            probe.dense_skipped = s.dense_skipped.clone();
            probe.notice = s.notice.clone();
        }
        Ok(probe)
    }

    /// The dispatcher's decision with every signal (`skillrag route`).
    pub fn route(&self, text: &str) -> Result<Route, AskError> {
        let text = normalize_question(text)?;
        if let Some(kind) = gate::classify(&text) {
            return Ok(gated_route(kind));
        }
        let skills: Vec<String> = self.engine.skills().iter().map(|s| s.id.clone()).collect();
        let p = self.probe(&text, &skills)?;
        Ok(self.decide(&p.question, &p.stats, &p.probes))
    }

    fn decide(&self, question: &Question, stats: &TermStats, probes: &HashMap<String, Probe>) -> Route {
        let signals = self.dispatcher.signals(question, stats, probes, None);
        let mut route = self.dispatcher.decide(&self.model, &signals);
        if route.decision == Decision::Ambiguous {
            if let Some(skills) = self.multi_intent(question, &route) {
                route.decision = Decision::Multi;
                route.skills = skills;
            }
        }
        route
    }

    /// Two accepted skills each clearly owning a different part of the question → both.
    fn multi_intent(&self, question: &Question, route: &Route) -> Option<Vec<String>> {
        let parts = route::clauses(&question.text);
        if parts.len() < 2 {
            return None;
        }
        let mut owners: Vec<String> = Vec::new();
        for part in parts {
            let p = self.probe(&part, &route.skills).ok()?;
            let signals: Vec<_> = self
                .dispatcher
                .signals(&p.question, &p.stats, &p.probes, None)
                .into_iter()
                .filter(|s| route.skills.contains(&s.skill))
                .collect();
            let sub = self.dispatcher.decide(&self.model, &signals);
            if sub.decision == Decision::Single && !owners.contains(&sub.skills[0]) {
                owners.push(sub.skills[0].clone());
            }
        }
        (owners.len() >= 2).then_some(owners)
    }

    /// Answers one question.
    pub fn ask(&self, text: &str, options: &AskOptions) -> Result<Answer, AskError> {
        self.ask_in(text, options, None)
    }

    /// Answers a question inside a conversation (follow-ups keep the previous skill and key terms).
    pub fn ask_in(
        &self,
        text: &str,
        options: &AskOptions,
        conversation: Option<&Conversation>,
    ) -> Result<Answer, AskError> {
        self.ask_streaming(text, options, conversation, None)
    }

    /// [`Assistant::ask_in`], handing the LLM's answer to `on_text` as its sentences pass the
    /// citation check (nothing is streamed for an extractive answer or a refusal).
    pub fn ask_streaming(
        &self,
        text: &str,
        options: &AskOptions,
        conversation: Option<&Conversation>,
        on_text: Option<generate::OnText<'_>>,
    ) -> Result<Answer, AskError> {
        let started = Instant::now();
        let text = normalize_question(text)?;
        let chinese = Language::detect(&text) == Language::Chinese;
        let mut answer = Answer::new(options.id.clone(), text.clone());
        let ms = |a: Instant| a.elapsed().as_secs_f64() * 1000.0;

        // The conversation's LLM budget, enforced here rather than left to the model: beyond it,
        // no rewriting and extractive answers.
        let token_budget = self.engine.project.config.llm.conversation_tokens;
        let llm_allowed = !(token_budget > 0 && conversation.is_some_and(|c| c.llm_tokens() >= token_budget));
        if !llm_allowed && self.generator.is_some() {
            answer.warnings.push(if chinese {
                format!("本次对话已用完大模型额度（{token_budget} 个 token），以下为不经大模型的答案。")
            } else {
                format!(
                    "This conversation has used its LLM budget ({token_budget} tokens); this is the answer without it."
                )
            });
        }
        let llm = &self.engine.project.config.llm;
        let assist = self.assist.as_ref().filter(|_| llm_allowed);
        let rewriter = assist.filter(|_| llm.rewrite);

        // Gate.
        if options.skill.is_none() {
            if let Some(kind) = gate::classify(&text) {
                let skills: Vec<(String, String)> =
                    self.engine.skills().iter().map(|s| (s.id.clone(), s.description.clone())).collect();
                answer.route = gated_route(kind);
                answer.answer = gate::reply(kind, chinese, &skills);
                if let Some(generator) = self.generator.as_ref().filter(|_| llm.chitchat && llm_allowed) {
                    let settings = self.generate_settings();
                    match generate::reply_without_retrieval(
                        generator.as_ref(),
                        kind,
                        &text,
                        &skills,
                        &settings,
                        chinese,
                        on_text,
                    ) {
                        Ok((reply, info)) => {
                            answer.answer = reply;
                            answer.generation = Some(info);
                        }
                        Err(fallback) => {
                            let Fallback { reason, info } = *fallback;
                            answer.warnings.push(llm_failed_warning(&reason, chinese));
                            answer.generation = Some(GenerationInfo { fallback: Some(reason), ..info });
                        }
                    }
                }
                answer.timings_ms.gate = ms(started);
                answer.timings_ms.total = answer.timings_ms.gate;
                self.record(&answer);
                return Ok(answer);
            }
        }
        answer.timings_ms.gate = ms(started);

        // Route (a follow-up borrows the previous question's key terms and skill).
        let route_started = Instant::now();
        let follow_up = conversation.and_then(|c| c.follow_up(&text));
        // With an LLM that rewrites, a follow-up becomes a standalone question; without, it borrows
        // the previous question's key terms.
        let standalone = match (&follow_up, rewriter, conversation) {
            (Some(_), Some(r), Some(c)) => r.standalone(&c.questions(), &text, chinese),
            _ => None,
        };
        let retrieval_text = match (&follow_up, standalone) {
            (_, Some(rewritten)) => rewritten,
            (Some(f), None) => format!("{} {}", f.key_terms.join(" "), text),
            (None, None) => text.clone(),
        };
        let all: Vec<String> = self.engine.skills().iter().map(|s| s.id.clone()).collect();
        let targets = match &options.skill {
            Some(s) => {
                self.engine.skill(s)?;
                vec![s.clone()]
            }
            None => all.clone(),
        };
        let Probed { question, prepared, stats, probes } = self.probe(&retrieval_text, &targets)?;
        let mut route = match (&options.skill, &follow_up) {
            (Some(s), _) => forced_route(s),
            (None, Some(f)) => {
                // Keep the previous skill unless the question alone clearly belongs elsewhere:
                // it routes to another skill *and* would not be accepted by the previous one. A
                // short follow-up ("那两年呢？") says too little to leave the topic on its own.
                let alone = self.probe(&text, &all)?;
                let own = self.decide(&alone.question, &alone.stats, &alone.probes);
                let previous_fits =
                    own.candidates.iter().any(|c| f.skills.contains(&c.skill) && c.score >= self.model.accept);
                if own.decision == Decision::Single && !f.skills.contains(&own.skills[0]) && !previous_fits {
                    own
                } else {
                    let mut r = self.decide(&question, &stats, &probes);
                    r.skills = f.skills.clone();
                    r.decision = if f.skills.len() > 1 { Decision::Multi } else { Decision::Single };
                    r
                }
            }
            (None, None) => self.decide(&question, &stats, &probes),
        };
        if route.decision == Decision::Ambiguous {
            if let Some(assist) = assist.filter(|_| llm.route) {
                self.settle_by_vote(assist, &mut route, &question.text, chinese);
            }
        }
        answer.route = route.clone();
        answer.timings_ms.route = ms(route_started);
        answer.warnings = probes.values().filter_map(|p| p.notice.clone()).collect();
        answer.warnings.sort();
        answer.warnings.dedup();

        match route.decision {
            Decision::None => {
                // A question about what a skill explicitly does not do gets that skill's boundary.
                let boundary = route.candidates.iter().find_map(|c| {
                    let skill = self.engine.skill(&c.skill).ok()?;
                    let item = boundary::unsupported_topic(&question, skill.boundary.as_ref()?, &stats)?;
                    Some(boundary_refusal(&c.skill, &item, chinese))
                });
                answer.refusal = Some(boundary.unwrap_or_else(|| self.out_of_scope(chinese)));
                return Ok(self.finish(answer, started));
            }
            Decision::Ambiguous => {
                let clarifier = assist.filter(|_| llm.clarify);
                answer.refusal = Some(self.ambiguous(&route.skills, &question.text, clarifier, chinese));
                return Ok(self.finish(answer, started));
            }
            Decision::Single | Decision::Multi => {}
        }
        for s in &route.skills {
            if self.engine.index_of(s)?.is_none() {
                return Err(AskError::Engine(EngineError::NotIndexed(s.clone())));
            }
        }

        // Retrieve, filter, loop — per routed skill.
        let retrieve_started = Instant::now();
        let config = &self.engine.project.config.ask;
        let mut kept: Vec<(Hit, f32)> = Vec::new();
        let mut weak_skills = Vec::new();
        let mut rescued = false;
        // With a rewriting LLM, the last retry is the model's own query (below).
        let max_attempts = match rewriter {
            Some(_) => config.max_attempts.saturating_sub(1).max(1),
            None => config.max_attempts,
        };
        let mut context_k = config.context_k;
        for skill_id in &route.skills {
            let skill = self.engine.skill(skill_id)?;
            if let Some(k) = skill.settings.top_k {
                context_k = k;
            }
            let answerable = |probe: &Probe| self.model.is_answerable(probe.best_coverage);
            let mut first = probes.get(skill_id).cloned();
            if !matches!(self.engine.reranker(), Ok(None)) {
                let probe = self.search_skill(skill_id, &question, &prepared, &stats, config.hits, true)?;
                if let Some(notice) = &probe.notice {
                    answer.warnings.push(notice.clone());
                }
                first = Some(probe);
            }
            let mut expansions = Vec::new();
            if let Some(assist) = assist.filter(|_| llm.multi_query > 0 || llm.hyde) {
                (first, expansions) = self.expand(assist, skill, &question, &stats, first, config.hits, chinese)?;
            }
            let retrieved = retrieve::retrieve(
                &self.engine,
                skill,
                &question,
                &prepared,
                &stats,
                first,
                config.hits,
                max_attempts,
                &answerable,
            )?;
            answer.attempts = answer.attempts.max(retrieved.attempts);
            // The question first, then the LLM's wordings searched with it, then the retries.
            let (question_run, retries) = retrieved.queries.split_at(retrieved.queries.len().min(1));
            for q in question_run.iter().chain(&expansions).chain(retries).cloned() {
                if !answer.queries.contains(&q) {
                    answer.queries.push(q);
                }
            }
            if retrieved.strong {
                kept.extend(retrieve::filter(&retrieved.probe, self.model.evidence));
            } else if let Some((query, hits)) = self.rescue(rewriter, skill, &question.text, context_k, chinese)? {
                // The lexical evidence check cannot judge another wording: the model does.
                answer.attempts += 1;
                answer.queries.push(query);
                kept.extend(hits.into_iter().map(|h| (h, 0.0)));
                rescued = true;
            } else {
                weak_skills.push(skill_id.clone());
            }
        }
        answer.retrieved = true;
        kept.sort_by(|a, b| b.0.scores.fused.total_cmp(&a.0.scores.fused));
        answer.hits = kept.iter().take(config.hits).map(|(h, _)| h.clone()).collect();
        answer.timings_ms.retrieve = ms(retrieve_started);

        if answer.hits.is_empty() {
            let skill_id = weak_skills.first().or(route.skills.first()).cloned().unwrap_or_default();
            // Weak evidence and a weak fit to the skill: the question is not this skill's after all.
            let refusal = if !route.forced && follow_up.is_none() && route.confidence < self.model.in_domain {
                answer.route.decision = Decision::None;
                answer.route.skills.clear();
                self.out_of_scope(chinese)
            } else {
                self.weak_evidence_refusal(&skill_id, &question, &stats, chinese)
            };
            answer.refusal = Some(refusal);
            return Ok(self.finish(answer, started));
        }

        // Compile the context; the LLM writes the answer from it, or it is extracted.
        let generate_started = Instant::now();
        // With a local model the budget is in its own tokens: prompt length is its main cost.
        let count_tokens = |text: &str| {
            self.generator.as_ref().and_then(|g| g.count_tokens(text)).unwrap_or_else(|| text.chars().count())
        };
        let budget = match self.generator.as_ref().and_then(|g| g.count_tokens("")) {
            Some(_) => compile::Budget {
                limit: self.engine.project.config.llm.context_tokens,
                unit: "tokens",
                measure: &count_tokens,
            },
            None => compile::Budget::chars(config.context_chars),
        };
        answer.context = compile::compile(&answer.hits, context_k.max(1), config.per_source.max(1), budget);
        let mut written = None;
        if let Some(generator) = self.generator.as_ref().filter(|_| llm_allowed) {
            let skill = self.engine.skill(&route.skills[0])?;
            // Evidence the lexical check could not judge is always judged by the model.
            let defaults = self.generate_settings();
            let settings = generate::Settings { judge: defaults.judge || rescued, ..defaults };
            let messages = generate::prompt(skill, &answer.context, &answer.query, question.language, settings.judge);
            written = Some(generate::write(generator.as_ref(), messages, &answer.context, &settings, chinese, on_text));
        }
        // The extractive answer is made only when the model's is not used.
        let extract_answer = |answer: &mut Answer| {
            let (text, citations) = extract::extract(&question, &stats, &answer.context);
            answer.answer = text;
            answer.citations = citations;
        };
        match written {
            Some(Ok(written)) if written.judged_not_found => {
                answer.generation = Some(GenerationInfo { rescued, ..written.info });
                answer.refusal = Some(self.weak_evidence_refusal(&route.skills[0], &question, &stats, chinese));
            }
            Some(Ok(written)) => {
                answer.answer = written.text;
                answer.citations = written.citations;
                answer.generation = Some(GenerationInfo { rescued, ..written.info });
            }
            Some(Err(fallback)) if rescued => {
                // Weak evidence the model could not use: the extractive answer would be weak too.
                let Fallback { reason, info } = *fallback;
                answer.generation = Some(GenerationInfo { rescued, fallback: Some(reason), ..info });
                answer.refusal = Some(self.weak_evidence_refusal(&route.skills[0], &question, &stats, chinese));
            }
            Some(Err(fallback)) => {
                let Fallback { reason, info } = *fallback;
                answer.warnings.push(llm_failed_warning(&reason, chinese));
                answer.generation = Some(GenerationInfo { fallback: Some(reason), ..info });
                extract_answer(&mut answer);
            }
            None => extract_answer(&mut answer),
        }
        answer.timings_ms.generate = ms(generate_started);
        Ok(self.finish(answer, started))
    }

    fn generate_settings(&self) -> generate::Settings {
        let llm = &self.engine.project.config.llm;
        generate::Settings {
            max_tokens: llm.max_tokens,
            temperature: llm.temperature,
            judge: llm.judge,
            min_support: llm.min_support,
            self_check: llm.self_check,
        }
    }

    /// Multi-query and HyDE retrieval: the question's routing probe in `skill` fused (RRF) with
    /// the results of the LLM's other wordings and of its hypothetical passage. Coverage is
    /// still measured against the question itself, so the extra queries can find other chunks
    /// but never make weak evidence look strong. Returns the probe and the queries run.
    #[allow(clippy::too_many_arguments)]
    fn expand(
        &self,
        assist: &assist::Assist,
        skill: &skillrag_skill::Skill,
        question: &Question,
        stats: &TermStats,
        base: Option<Probe>,
        k: usize,
        chinese: bool,
    ) -> Result<(Option<Probe>, Vec<String>), EngineError> {
        let llm = &self.engine.project.config.llm;
        let Some(mut base) = base else { return Ok((None, Vec::new())) };
        let mut queries = match llm.multi_query {
            0 => Vec::new(),
            n => assist.wordings(&skill.description, &question.text, n, chinese),
        };
        let passage = llm.hyde.then(|| assist.hypothetical_passage(&skill.description, &question.text, chinese));
        let mut labels = queries.clone();
        if let Some(p) = passage.flatten() {
            labels.push(format!("HyDE: {p}"));
            queries.push(p);
        }
        if queries.is_empty() {
            return Ok((Some(base), labels));
        }
        let mut lists = vec![std::mem::take(&mut base.hits)];
        for query in &queries {
            let prepared = self.engine.prepare_query(query, Mode::Hybrid)?;
            // The question's own list is the reranked one; the extra lists only add candidates.
            let options =
                SearchOptions { skills: vec![skill.id.clone()], k: Some(k), rerank: false, ..Default::default() };
            lists.push(self.engine.search_prepared(query, &prepared, &options)?.hits);
        }
        let fused = retrieve::fuse_lists(&lists, self.engine.project.config.retrieval.rrf_k, k);
        let probe = Probe {
            notice: base.notice,
            dense_used: base.dense_used,
            dense_skipped: base.dense_skipped,
            ..Probe::new(&skill.id, fused, question, stats)
        };
        Ok((Some(probe), labels))
    }

    /// The agent loop's last retry: the LLM's search query for the question, in the skill.
    /// `None` without a rewriting LLM, or when its query finds nothing.
    fn rescue(
        &self,
        rewriter: Option<&assist::Assist>,
        skill: &skillrag_skill::Skill,
        question: &str,
        k: usize,
        chinese: bool,
    ) -> Result<Option<(String, Vec<Hit>)>, EngineError> {
        let Some(rewriter) = rewriter else { return Ok(None) };
        let Some(query) = rewriter.search_query(&skill.description, question, chinese) else { return Ok(None) };
        let prepared = self.engine.prepare_query(&query, Mode::Hybrid)?;
        let options = SearchOptions { skills: vec![skill.id.clone()], k: Some(k.max(1)), ..Default::default() };
        let hits = self.engine.search_prepared(&query, &prepared, &options)?.hits;
        Ok((!hits.is_empty()).then_some((query, hits)))
    }

    fn finish(&self, mut answer: Answer, started: Instant) -> Answer {
        answer.timings_ms.total = started.elapsed().as_secs_f64() * 1000.0;
        if let Some(r) = &answer.refusal {
            answer.answer = r.message.clone();
        }
        self.record(&answer);
        answer
    }

    /// `boundary` when the question is about something the skill says it does not support,
    /// otherwise `not_found`.
    fn weak_evidence_refusal(&self, skill_id: &str, question: &Question, stats: &TermStats, chinese: bool) -> Refusal {
        let boundary = self.engine.skill(skill_id).ok().and_then(|s| s.boundary.as_ref());
        if let Some(item) = boundary.and_then(|b| boundary::unsupported_topic(question, b, stats)) {
            return boundary_refusal(skill_id, &item, chinese);
        }
        let message = if chinese {
            format!("知识库中没有找到相关信息（技能：{skill_id}）。")
        } else {
            format!("Not found in the knowledge base (skill: {skill_id}).")
        };
        Refusal { kind: RefusalKind::NotFound, message }
    }

    fn out_of_scope(&self, chinese: bool) -> Refusal {
        let skills: Vec<String> = self.engine.skills().iter().map(|s| s.id.clone()).collect();
        let message = if chinese {
            format!("这个问题不在现有技能的范围内（可回答：{}）。", skills.join("、"))
        } else {
            format!("This question is outside the scope of the available skills ({}).", skills.join(", "))
        };
        Refusal { kind: RefusalKind::OutOfScope, message }
    }

    /// The LLM as a third routing signal: between two about equally likely skills, the one it
    /// picks (when it picks exactly one of them) settles the route. Any other reply — both,
    /// neither, another skill, junk — leaves the route ambiguous.
    fn settle_by_vote(&self, assist: &assist::Assist, route: &mut Route, question: &str, chinese: bool) {
        let candidates: Vec<(String, String)> = route
            .skills
            .iter()
            .filter_map(|id| self.engine.skill(id).ok().map(|s| (s.id.clone(), s.description.clone())))
            .collect();
        let Some(vote) = assist.route_vote(question, &candidates, chinese) else { return };
        if let [picked] = vote.as_slice() {
            route.skills = vec![picked.clone()];
            route.decision = Decision::Single;
        }
        route.llm_vote = Some(vote);
    }

    fn ambiguous(
        &self,
        skills: &[String],
        question: &str,
        clarifier: Option<&assist::Assist>,
        chinese: bool,
    ) -> Refusal {
        let describe = |id: &String| {
            let d = self.engine.skill(id).map(|s| s.description.clone()).unwrap_or_default();
            let short: String = d.chars().take(40).collect();
            (id.clone(), short)
        };
        let (a, da) = describe(&skills[0]);
        let (b, db) = describe(&skills[1]);
        let worded =
            clarifier.and_then(|c| c.clarify(question, &(a.clone(), da.clone()), &(b.clone(), db.clone()), chinese));
        // The model's question is used only when it names both skills, so the user can answer it.
        if let Some(message) = worded.filter(|m| m.contains(&a) && m.contains(&b)) {
            return Refusal { kind: RefusalKind::Ambiguous, message };
        }
        let message = if chinese {
            format!("这个问题可能属于「{a}」（{da}）或「{b}」（{db}）。请问您想问的是哪一个？")
        } else {
            format!("This could be a question for `{a}` ({da}) or `{b}` ({db}). Which one do you mean?")
        };
        Refusal { kind: RefusalKind::Ambiguous, message }
    }

    /// Logs the finished question: the trace when enabled, and the gaps log when refused.
    fn record(&self, answer: &Answer) {
        if let Some(gaps) = &self.gaps {
            gaps.record(answer);
        }
        self.trace(answer);
    }

    fn trace(&self, answer: &Answer) {
        let path = &self.engine.project.config.ask.trace;
        if path.is_empty() {
            return;
        }
        let path = self.engine.project.root.join(path);
        let line = serde_json::json!({
            "time": std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()),
            "query": answer.query,
            "route": answer.route,
            "queries": answer.queries,
            "attempts": answer.attempts,
            "hits": answer.hits.iter().map(|h| serde_json::json!({
                "skill": h.skill, "source": h.source, "chunk_id": h.chunk_id, "scores": h.scores})).collect::<Vec<_>>(),
            "refusal": answer.refusal,
            "timings_ms": answer.timings_ms,
        });
        use std::io::Write;
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(&path) {
            let _ = writeln!(f, "{line}");
        }
    }
}

/// The notice that goes with the extractive (or fixed) answer when the LLM failed.
fn llm_failed_warning(reason: &str, chinese: bool) -> String {
    if chinese {
        format!("大模型未能回答（{reason}），以下为不经大模型的答案。")
    } else {
        format!("The LLM could not answer ({reason}); this is the answer without it.")
    }
}

fn boundary_refusal(skill: &str, item: &str, chinese: bool) -> Refusal {
    let message = if chinese {
        format!("这超出了技能「{skill}」的知识边界：不支持{item}。")
    } else {
        format!("This is outside what the skill `{skill}` covers: it does not support {item}.")
    };
    Refusal { kind: RefusalKind::Boundary, message }
}

fn gated_route(kind: gate::GateKind) -> Route {
    Route {
        skills: vec![],
        confidence: 1.0,
        decision: Decision::None,
        candidates: vec![],
        gate: Some(kind.as_str().to_string()),
        forced: false,
        llm_vote: None,
    }
}

fn forced_route(skill: &str) -> Route {
    Route {
        skills: vec![skill.to_string()],
        confidence: 1.0,
        decision: Decision::Single,
        candidates: vec![],
        gate: None,
        forced: true,
        llm_vote: None,
    }
}

/// Trims the question; rejects an empty one; cuts a huge one at a character boundary.
fn normalize_question(text: &str) -> Result<String, AskError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(AskError::Empty);
    }
    Ok(trimmed.chars().take(MAX_QUESTION_CHARS).collect())
}
