//! The ask path. Its stages, in order, are listed once, in docs/design.md §4; the module map is
//! §4.1. Each stage in `stages/` is a function from its input and settings to its output value;
//! [`assemble`] is the only module that writes the [`Answer`]. Layers: `base` ← `llm` ← `stages`
//! ← this file; nothing imports upward.
//!
//! [`Assistant`] owns the [`Engine`], the [`Router`] and the settings resolved once from the
//! configuration; [`Assistant::ask`] is the one entry point for a turn (the CLI's `ask`, `chat`
//! and `batch`, `eval`, the HTTP server and MCP all call it) and only wires the stages together
//! and times them. Every question ends in an [`Answer`]: cited, or a typed [`Refusal`]
//! (`out_of_scope`, `not_found`, `ambiguous`, `boundary`) in the question's language.

#![warn(clippy::too_many_lines)]

mod assemble;
mod base;
mod error;
mod llm;
mod logs;
mod reader;
mod stages;

pub use base::contract::{
    marker_len, Answer, Candidate, Citation, CitedPicture, Context, ContextPiece, Decision, GateKind, GenerationInfo,
    PlanStep, ReaderInfo, Refusal, RefusalKind, Route, Timings,
};
pub use base::conversation::Conversation;
pub use base::labelled::{read_labelled, LabelledQuestion};
pub use base::question::AskOptions;
pub use base::settings::AskSettings;
pub use error::{AskError, TuneError};
pub use logs::feedback::{routing_labels, FeedbackLog, FeedbackRecord, JudgedHit, Judgement, Rating};
pub use logs::gaps::{Gap, GapCause, GapLog, GapRecord, LikedAnswer};
pub use logs::history::{ConversationStore, ConversationSummary, HistoryError, SavedConversation, Turn};
pub use logs::jsonl::Skipped;
pub use reader::Reader;
pub use stages::answer::OnText;
pub use stages::route::RouterModel;
pub use stages::task::{ContextOptions, SkillBrief, TaskContext, MAX_CONTEXT_BUDGET};

use base::conversation;
use base::question::normalize_question;
use llm::Assist;
use logs::trace;
use skillrag_core::Hit;
use skillrag_core::Language;
use skillrag_engine::Engine;
use skillrag_generate::Generator;
use stages::answer::Reply;
use stages::plan::Plan;
use stages::retrieve::Helpers;
use stages::retrieve::Retrieval;
use stages::route::{Routed, Router};
use stages::{answer, compare, compile, gate, plan, refuse, retrieve, task};
use std::sync::Arc;
use std::time::Instant;

/// A project ready to answer questions.
pub struct Assistant {
    pub engine: Engine,
    router: Router,
    settings: AskSettings,
    /// Where `not_found` and `out_of_scope` questions are logged; `None` = not logged.
    gaps: Option<GapLog>,
    /// Writes answers from the context; `None` = extractive answers.
    generator: Option<Arc<dyn Generator>>,
    /// The LLM-assisted steps (rewriting, multi-query, HyDE, routing, clarifying), each on
    /// when its `[llm]` switch is; `None` without an LLM.
    assist: Option<Assist>,
    /// Judges the extractive answer's candidates (`[reader]`); `None` = the lexical decision stands.
    reader: Option<Reader>,
}

/// The LLM as this turn may use it: nothing once the conversation's budget is spent.
#[derive(Clone, Copy)]
struct TurnLlm<'a> {
    generator: Option<&'a dyn Generator>,
    assist: Option<&'a Assist>,
}

impl Assistant {
    /// Opens the configured LLM, the router (fitting it when the skills, settings or indexes
    /// changed) and the settings.
    pub fn open(engine: Engine) -> Result<Assistant, AskError> {
        let generator = engine.open_generator()?;
        let reader = engine.open_reader_model()?;
        Ok(Assistant::open_with(engine, generator)?.with_reader(reader))
    }

    /// [`Assistant::open`] with an LLM already loaded (or none): a server reopening the project
    /// on a new index generation keeps its model.
    pub fn open_with(engine: Engine, generator: Option<Arc<dyn Generator>>) -> Result<Assistant, AskError> {
        let settings = AskSettings::resolve(&engine.project.config, &engine.project.root);
        let router = Router::open(&engine, &settings)?;
        let state = engine.project.state_dir();
        let gaps = settings.gaps.then(|| GapLog::new(&state));
        let assist = generator.as_ref().map(|g| Assist::new(g.clone(), Some(state.join("cache/llm-assist.jsonl"))));
        Ok(Assistant { engine, router, settings, gaps, generator, assist, reader: None })
    }

    /// The assistant with `model` as its reader (`None`: without one), set up by `[reader]`.
    pub fn with_reader(mut self, model: Option<Arc<dyn Generator>>) -> Assistant {
        let c = &self.engine.project.config.reader;
        self.reader = model.map(|m| Reader::new(m, c.threshold, c.max_calls, c.passages, c.band));
        self
    }

    /// The reader, when one is configured.
    pub fn reader(&self) -> Option<&Reader> {
        self.reader.as_ref()
    }

    /// Stops logging unanswered questions (evaluation runs should not fill the gaps log).
    pub fn without_gap_log(mut self) -> Assistant {
        self.gaps = None;
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
        self.router.model()
    }

    /// Refits the router on the skills' examples plus `labelled` questions and saves it.
    pub fn tune(&mut self, labelled: Vec<LabelledQuestion>) -> Result<&RouterModel, AskError> {
        self.router.refit(&self.engine, &self.settings, labelled)
    }

    /// The labelled questions the router was fitted on (besides the skills' examples).
    pub fn labelled(&self) -> &[LabelledQuestion] {
        self.router.labelled()
    }

    /// The dispatcher's decision with every signal (`skillrag route`): gate, then route, with
    /// no conversation and no LLM.
    pub fn route(&self, text: &str) -> Result<Route, AskError> {
        let text = normalize_question(text)?;
        if let Some(kind) = gate::classify(&text) {
            return Ok(gate::gated_route(kind));
        }
        let skills: Vec<String> = self.engine.skills().iter().map(|s| s.id.clone()).collect();
        let probed = self.router.probe(&self.engine, &text, &skills)?;
        Ok(self.router.decide(&self.engine, &probed))
    }

    /// Answers one turn — the entry point for every caller. In a `conversation`, a follow-up
    /// keeps the previous topic, and the turn is recorded in it. `on_text` receives the LLM's
    /// answer as its sentences pass the citation check (nothing is streamed for an extractive
    /// answer or a refusal).
    pub fn ask(
        &self,
        text: &str,
        options: &AskOptions,
        mut conversation: Option<&mut Conversation>,
        on_text: Option<OnText<'_>>,
    ) -> Result<Answer, AskError> {
        let started = Instant::now();
        let text = normalize_question(text)?;
        // An unknown skill is an error before the gate answers small talk to a named skill.
        if let Some(skill) = &options.skill {
            self.engine.skill(skill)?;
        }
        let language = Language::detect(&text);
        let mut answer = Answer::new(options.id.clone(), text.clone());
        let budget = self.settings.llm.conversation_tokens;
        let allowance = conversation::allowance(conversation.as_deref(), budget, self.generator.is_some(), language);
        assemble::warned(&mut answer, allowance.warning);
        let llm = match allowance.llm {
            true => TurnLlm { generator: self.generator.as_deref(), assist: self.assist.as_ref() },
            false => TurnLlm { generator: None, assist: None },
        };

        if let Some(kind) = gate::check(&text, options.skill.is_some()) {
            self.reply_gated(&mut answer, kind, llm, language, on_text);
            assemble::gate_timed(&mut answer, ms(started), true);
            if !options.unrecorded {
                self.record(&answer, None);
            }
            return Ok(answer);
        }
        assemble::gate_timed(&mut answer, ms(started), false);

        let route_started = Instant::now();
        let (plan, routed) = self.plan_and_route(&text, options, conversation.as_deref(), llm.assist)?;
        if let Some(c) = conversation.as_deref_mut() {
            c.record(&text, &routed.route);
        }
        assemble::routed(&mut answer, &routed, ms(route_started));

        let result = self.respond(&mut answer, &plan, &routed, llm, on_text);
        if let (Some(c), Some(g)) = (conversation, &answer.generation) {
            c.spend(g.prompt_tokens + g.completion_tokens);
        }
        result?;
        // What the follow-up was searched as: with the terms it borrowed, or alone.
        let searched = routed.probed.question.text.as_str();
        let standalone = (plan.follow_up.is_some() && searched != text).then_some(searched);
        let answer = assemble::finish(answer, ms(started));
        if !options.unrecorded {
            self.record(&answer, standalone);
        }
        Ok(answer)
    }

    /// A conversation rebuilt from its earlier user questions alone (oldest first), as an HTTP
    /// client sends them: each question is gated, planned and routed exactly as [`Assistant::ask`]
    /// does, so it lends the same topic, but nothing is retrieved or answered again.
    pub fn replay(&self, history: &[String]) -> Conversation {
        let mut conversation = Conversation::new();
        for question in history {
            let Ok(text) = normalize_question(question) else { continue };
            if gate::check(&text, false).is_some() {
                continue;
            }
            if let Ok((_, routed)) =
                self.plan_and_route(&text, &AskOptions::default(), Some(&conversation), self.assist.as_ref())
            {
                conversation.record(&text, &routed.route);
            }
        }
        conversation
    }

    /// Plan and route: the stages that decide a turn's topic.
    fn plan_and_route(
        &self,
        text: &str,
        options: &AskOptions,
        conversation: Option<&Conversation>,
        assist: Option<&Assist>,
    ) -> Result<(Plan, Routed), AskError> {
        let steps = &self.settings.llm;
        let plan = plan::plan(text, conversation, assist.filter(|_| steps.rewrite));
        let voter = assist.filter(|_| steps.route);
        let routed = self.router.route(&self.engine, &plan, options.skill.as_deref(), voter)?;
        Ok((plan, routed))
    }

    /// The fixed reply to a gated request, or the LLM's (`[llm] chitchat`).
    fn reply_gated(
        &self,
        answer: &mut Answer,
        kind: GateKind,
        llm: TurnLlm<'_>,
        language: Language,
        on_text: Option<OnText<'_>>,
    ) {
        let skills: Vec<(String, String)> =
            self.engine.skills().iter().map(|s| (s.id.clone(), s.description.clone())).collect();
        let generator = llm.generator.filter(|_| self.settings.llm.chitchat);
        let reply = answer::gated(generator, kind, &answer.query, &skills, &self.settings.generate, language, on_text);
        assemble::gated(answer, kind, reply);
    }

    /// A routed question's refusal, or retrieve → compile → answer.
    fn respond(
        &self,
        answer: &mut Answer,
        plan: &Plan,
        routed: &Routed,
        llm: TurnLlm<'_>,
        on_text: Option<OnText<'_>>,
    ) -> Result<(), AskError> {
        // A compare question is planned as one retrieval per side, in the skills it routes to.
        let routed_to_skills = matches!(routed.route.decision, Decision::Single | Decision::Multi);
        if routed_to_skills && routed.parts.is_empty() && plan.follow_up.is_none() {
            if let Some(comparison) = compare::detect(&plan.question) {
                return self.respond_compare(answer, plan, routed, &comparison, llm, on_text);
            }
        }
        let Some(retrieval) = self.retrieve_evidence(answer, plan, routed, llm)? else { return Ok(()) };
        let generate_started = Instant::now();
        self.compile_and_answer(answer, routed, &retrieval, llm, plan.language, on_text)?;
        assemble::generate_timed(answer, ms(generate_started));
        Ok(())
    }

    /// A routed question's refusal (in `answer`, and `None`), or its retrieval, with the hits
    /// moved into `answer`: the stages that [`Assistant::ask`] and
    /// [`Assistant::compile_context`] share.
    fn retrieve_evidence(
        &self,
        answer: &mut Answer,
        plan: &Plan,
        routed: &Routed,
        llm: TurnLlm<'_>,
    ) -> Result<Option<retrieve::Retrieval>, AskError> {
        let (route, language) = (&routed.route, plan.language);
        let refuser = self.refuser(routed, language);
        match route.decision {
            Decision::None => {
                assemble::refused(answer, refuser.unrouted(route));
                return Ok(None);
            }
            Decision::Ambiguous => {
                let clarifier = llm.assist.filter(|_| self.settings.llm.clarify);
                assemble::refused(answer, refuser.ambiguous(&route.skills, clarifier));
                return Ok(None);
            }
            Decision::Single | Decision::Multi => {}
        }
        self.check_indexed(route)?;

        let retrieve_started = Instant::now();
        let helpers = self.helpers(llm);
        let model = self.router.model();
        let mut retrieval = retrieve::retrieve(&self.engine, &self.settings, model, routed, helpers, language)?;
        // The routing probes were the question's first search: retrieval time.
        assemble::retrieved(answer, &mut retrieval, routed.probe_ms + ms(retrieve_started));

        if answer.hits.is_empty() {
            let follow_up = plan.follow_up.is_some();
            let weak = &retrieval.weak_skills;
            let refusal = refuser.nothing_retrieved(&mut answer.route, weak, follow_up, model.in_domain);
            assemble::refused(answer, refusal);
            return Ok(None);
        }
        Ok(Some(retrieval))
    }

    /// The compiled context for `task`: gated, routed and retrieved exactly as [`Assistant::ask`]
    /// does, then compiled within `options.budget`. Small talk and text operations on text the
    /// user gives need no knowledge: they get the gate's route and an empty context. Tasks are not
    /// questions a user asked, so nothing is written to the gaps log.
    pub fn compile_context(&self, task: &str, options: &ContextOptions) -> Result<TaskContext, AskError> {
        if let Some(budget) = options.budget {
            if budget == 0 || budget > MAX_CONTEXT_BUDGET {
                return Err(AskError::Budget { given: budget, max: MAX_CONTEXT_BUDGET });
            }
        }
        let started = Instant::now();
        let text = normalize_question(task)?;
        if let Some(skill) = &options.skill {
            self.engine.skill(skill)?;
        }
        let mut answer = Answer::new(None, text.clone());
        let llm = TurnLlm { generator: self.generator.as_deref(), assist: self.assist.as_ref() };
        if let Some(kind) = gate::check(&text, options.skill.is_some()) {
            assemble::gated(&mut answer, kind, Reply::default());
            assemble::gate_timed(&mut answer, ms(started), true);
            return Ok(assemble::task_context(&self.engine, answer, vec![]));
        }
        assemble::gate_timed(&mut answer, ms(started), false);

        let route_started = Instant::now();
        let ask_options = AskOptions { skill: options.skill.clone(), id: None, ..Default::default() };
        let (plan, routed) = self.plan_and_route(&text, &ask_options, None, llm.assist)?;
        assemble::route_only(&mut answer, &routed, ms(route_started));
        if let Some(mut retrieval) = self.retrieve_evidence(&mut answer, &plan, &routed, llm)? {
            let compile_started = Instant::now();
            let rules = task::standing_rules(&self.engine, &answer.route.skills, &answer.hits)?;
            retrieval.context_k += rules.len();
            let hits: Vec<Hit> = rules.into_iter().chain(answer.hits.iter().cloned()).collect();
            let context = self.compile(&hits, &retrieval, options.budget);
            assemble::compiled(&mut answer, context);
            assemble::generate_timed(&mut answer, ms(compile_started));
        }
        // A task refused for its skill's knowledge (`not_found`) or boundary still belongs to that
        // skill: the agent gets the refusal with the skill's instructions, boundary and standing
        // rules, so it does not fill the gap from memory against them.
        let refused_in_skill =
            answer.refusal.as_ref().is_some_and(|r| matches!(r.kind, RefusalKind::NotFound | RefusalKind::Boundary));
        if refused_in_skill && !answer.route.skills.is_empty() {
            let rules = task::standing_rules(&self.engine, &answer.route.skills, &[])?;
            let retrieval = Retrieval { context_k: rules.len(), ..Default::default() };
            let context = self.compile(&rules, &retrieval, options.budget);
            assemble::compiled(&mut answer, context);
        }
        let answer = assemble::finish(answer, ms(started));
        let skills = match &answer.refusal {
            None => answer.route.skills.clone(),
            Some(_) if refused_in_skill => answer.route.skills.clone(),
            Some(_) => vec![],
        };
        Ok(assemble::task_context(&self.engine, answer, skills))
    }

    /// Every routed skill must have an index to retrieve from.
    fn check_indexed(&self, route: &Route) -> Result<(), AskError> {
        for s in &route.skills {
            // A damaged index is named as damaged, with its repair, not as missing.
            self.engine.require_index(s)?;
        }
        Ok(())
    }

    /// The LLM steps retrieval may use in this turn.
    fn helpers<'a>(&'a self, llm: TurnLlm<'a>) -> Helpers<'a> {
        let steps = &self.settings.llm;
        Helpers {
            expander: llm.assist.filter(|_| steps.multi_query > 0 || steps.hyde),
            rewriter: llm.assist.filter(|_| steps.rewrite),
            reader: self.reader.as_ref(),
        }
    }

    /// A compare question: each side searched on its own in the routed skills (in parallel), the
    /// sides' contexts compiled side by side under one budget, then a comparison that cites both
    /// sides (the LLM's), or a table with one row per side. `answer.plan` lists the steps.
    fn respond_compare(
        &self,
        answer: &mut Answer,
        plan: &Plan,
        routed: &Routed,
        comparison: &compare::Comparison,
        llm: TurnLlm<'_>,
        on_text: Option<OnText<'_>>,
    ) -> Result<(), AskError> {
        self.check_indexed(&routed.route)?;
        let retrieve_started = Instant::now();
        let queries = comparison.queries();
        let sides: Vec<(Routed, retrieve::Retrieval)> = std::thread::scope(|scope| {
            let running: Vec<_> = queries
                .iter()
                .map(|query| scope.spawn(move || self.retrieve_side(query, routed, llm, plan.language)))
                .collect();
            running
                .into_iter()
                .map(|side| side.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
                .collect::<Result<Vec<_>, AskError>>()
        })?;
        let retrieve_ms = routed.probe_ms + ms(retrieve_started);
        let weak = assemble::sides(answer, &queries, &sides, &routed.route.skills[0], retrieve_ms);
        if answer.hits.is_empty() {
            let in_domain = self.router.model().in_domain;
            let refuser = self.refuser(routed, plan.language);
            let refusal = refuser.nothing_retrieved(&mut answer.route, &weak, false, in_domain);
            assemble::refused(answer, refusal);
            return Ok(());
        }

        let generate_started = Instant::now();
        let share = self.context_budget().limit / sides.len();
        let contexts: Vec<Context> = sides.iter().map(|(_, r)| self.compile(&r.hits, r, Some(share))).collect();
        let (context, members) = compile::side_by_side(contexts);
        assemble::compiled(answer, context);
        let surroundings = self.surroundings(&answer.context)?;
        let side_evidence: Vec<answer::Side<'_>> = comparison
            .sides
            .iter()
            .zip(&sides)
            .zip(&members)
            .map(|((name, (side, _)), pieces)| answer::Side {
                name,
                question: &side.probed.question,
                stats: &side.probed.stats,
                pieces,
            })
            .collect();
        let evidence = answer::Evidence {
            question: &routed.probed.question,
            stats: &routed.probed.stats,
            context: &answer.context,
            rescued: sides.iter().any(|(_, r)| r.rescued),
            unsure: sides.iter().any(|(_, r)| r.unsure),
            surroundings: &surroundings,
            hits: &answer.hits,
            parts: &[],
            sides: &side_evidence,
        };
        let skill = self.engine.skill(&routed.route.skills[0])?;
        let (outcome, read) = answer::answer(
            llm.generator,
            self.reader.as_ref(),
            skill,
            &answer.query,
            &evidence,
            &self.settings.generate,
            plan.language,
            on_text,
        );
        self.settle_answer(answer, (outcome, read), routed, plan.language, &skill.id);
        assemble::generate_timed(answer, ms(generate_started));
        Ok(())
    }

    /// One side of a compare question: probed and retrieved in the routed skills, as a question
    /// of its own.
    fn retrieve_side(
        &self,
        query: &str,
        routed: &Routed,
        llm: TurnLlm<'_>,
        language: Language,
    ) -> Result<(Routed, retrieve::Retrieval), AskError> {
        let probed = self.router.probe(&self.engine, query, &routed.route.skills)?;
        let side = Routed { route: routed.route.clone(), probed, probe_ms: 0.0, parts: Vec::new() };
        let model = self.router.model();
        let retrieval = retrieve::retrieve(&self.engine, &self.settings, model, &side, self.helpers(llm), language)?;
        Ok((side, retrieval))
    }

    /// Compile → answer, from the retrieved hits in `answer`.
    fn compile_and_answer(
        &self,
        answer: &mut Answer,
        routed: &Routed,
        retrieval: &retrieve::Retrieval,
        llm: TurnLlm<'_>,
        language: Language,
        on_text: Option<OnText<'_>>,
    ) -> Result<(), AskError> {
        let (question, stats) = (&routed.probed.question, &routed.probed.stats);
        let context = self.compile(&answer.hits, retrieval, None);
        assemble::compiled(answer, context);
        let skill = self.engine.skill(&routed.route.skills[0])?;
        let surroundings = self.surroundings(&answer.context)?;
        let parts: Vec<answer::Part<'_>> = routed
            .parts
            .iter()
            .map(|p| answer::Part {
                skill: &p.skill,
                text: &p.text,
                question: &p.probed.question,
                stats: &p.probed.stats,
            })
            .collect();
        let evidence = answer::Evidence {
            question,
            stats,
            context: &answer.context,
            rescued: retrieval.rescued,
            unsure: retrieval.unsure,
            surroundings: &surroundings,
            hits: &answer.hits,
            parts: &parts,
            sides: &[],
        };
        let reader = self.reader.as_ref();
        let settings = &self.settings.generate;
        let answered =
            answer::answer(llm.generator, reader, skill, &answer.query, &evidence, settings, language, on_text);
        self.settle_answer(answer, answered, routed, language, &skill.id);
        Ok(())
    }

    /// The answer stage's outcome and what the reader did, written into `answer`.
    fn settle_answer(
        &self,
        answer: &mut Answer,
        answered: (answer::Outcome, Option<ReaderInfo>),
        routed: &Routed,
        language: Language,
        skill: &str,
    ) {
        let not_found = || self.refuser(routed, language).weak_evidence(skill);
        assemble::answered(answer, answered, &self.engine, not_found);
    }

    /// The hits compiled into the context: within `limit` when given, else the configured
    /// budget. The budget follows the configured model (its tokens when it counts them) even
    /// when this turn may not use it.
    fn compile(&self, hits: &[skillrag_core::Hit], retrieval: &retrieve::Retrieval, limit: Option<usize>) -> Context {
        let mut budget = self.context_budget();
        budget.limit = limit.unwrap_or(budget.limit);
        compile::compile(hits, retrieval.context_k.max(1), self.settings.per_source.max(1), budget)
    }

    /// The configured context budget, in the configured model's tokens when it counts them.
    fn context_budget(&self) -> compile::Budget<'_> {
        compile::Budget::for_generator(
            self.generator.as_deref(),
            self.settings.llm.context_tokens,
            self.settings.context_chars,
        )
    }

    /// The document text around each context piece, for the extractive answer; each document's
    /// chunks are read once, however many of its pieces the context holds.
    fn surroundings(&self, context: &Context) -> Result<Vec<answer::Surroundings>, AskError> {
        use std::collections::hash_map::Entry;
        let mut documents: std::collections::HashMap<(&str, &str), Vec<skillrag_core::Chunk>> = Default::default();
        let mut out = Vec::with_capacity(context.pieces.len());
        for piece in &context.pieces {
            let document = match documents.entry((piece.skill.as_str(), piece.source.as_str())) {
                Entry::Occupied(known) => known.into_mut(),
                Entry::Vacant(new) => new.insert(
                    self.engine.index_of(&piece.skill)?.map(|i| i.chunks_of(&piece.source)).unwrap_or_default(),
                ),
            };
            out.push(answer::Surroundings::read(document, piece.chunk_id, &piece.text));
        }
        Ok(out)
    }

    fn refuser<'a>(&'a self, routed: &'a Routed, language: Language) -> refuse::Refuser<'a> {
        let (question, stats) = (&routed.probed.question, &routed.probed.stats);
        refuse::Refuser { engine: &self.engine, question, stats, language }
    }

    /// Logs the finished question: the gaps log when refused (a follow-up as `standalone`, the
    /// question it was searched as), and the trace when enabled.
    fn record(&self, answer: &Answer, standalone: Option<&str>) {
        if let Some(gaps) = &self.gaps {
            gaps.record(answer, standalone);
        }
        if let Some(path) = &self.settings.trace {
            trace::append(path, answer);
        }
    }
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}
