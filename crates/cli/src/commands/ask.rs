//! `skillrag ask`, `context`, `chat`, `batch`, `route` and `tune`.

use super::{open_engine, open_project, print_json};
use crate::cli::{AskArgs, BatchArgs, ChatArgs, Cli, ContextArgs, RouteArgs, TuneArgs};
use crate::output::{truncate, Table};
use anyhow::{Context, Result};
use skillrag_ask::{
    routing_labels, Answer, AskOptions, Assistant, ContextOptions, Conversation, ConversationStore, FeedbackLog,
    FeedbackRecord, Judgement, Rating, Refusal, Route,
};
use skillrag_engine::Engine;
use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

/// The assistant, with the configured LLM unless `llm` is false and the configured reader unless
/// `reader` is (routing and tuning need neither, and a local model takes a while to load).
fn open_assistant(cli: &Cli, llm: bool, reader: bool) -> Result<Assistant> {
    open_with_models(open_engine(open_project(cli)?)?, llm, reader)
}

/// The assistant over `engine`, with the configured LLM and reader where asked for.
pub(super) fn open_with_models(engine: Engine, llm: bool, reader: bool) -> Result<Assistant> {
    let generator = if llm { engine.open_generator()? } else { None };
    let reader = if reader { engine.open_reader_model()? } else { None };
    Ok(Assistant::open_with(engine, generator)?.with_reader(reader))
}

pub fn ask(cli: &Cli, args: &AskArgs) -> Result<ExitCode> {
    let assistant = open_assistant(cli, !args.no_llm, !args.no_reader)?;
    let options = AskOptions { skill: args.skill.clone(), id: None, ..Default::default() };
    if cli.json {
        print_json(&assistant.ask(&args.query, &options, None, None)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let (answer, streamed) = ask_streamed(&assistant, &args.query, &options, None)?;
    print_answer(&answer, args.hits, streamed);
    Ok(ExitCode::SUCCESS)
}

/// `skillrag context`: the compiled context of a task, or the refusal `ask` would give (exit 0
/// either way, as `ask`: a refusal is an answer).
pub fn context(cli: &Cli, args: &ContextArgs) -> Result<ExitCode> {
    let assistant = open_assistant(cli, true, true)?;
    let budget = args.budget.map(|b| usize::try_from(b).unwrap_or(usize::MAX));
    let task = assistant.compile_context(&args.task, &ContextOptions { skill: args.skill.clone(), budget })?;
    if cli.json {
        print_json(&task)?;
        return Ok(ExitCode::SUCCESS);
    }
    for w in &task.warnings {
        eprintln!("warning: {w}");
    }
    println!("{}", task.render());
    let c = &task.context;
    let how = route_how(&task.route, task.refusal.as_ref());
    eprintln!(
        "— {how}; {} pieces, {} of {} {}; {:.1} ms",
        c.pieces.len(),
        c.used,
        c.budget,
        c.unit,
        task.timings_ms.total
    );
    Ok(ExitCode::SUCCESS)
}

/// Asks, printing the LLM's checked sentences as they come; says whether anything was printed.
fn ask_streamed(
    assistant: &Assistant,
    query: &str,
    options: &AskOptions,
    conversation: Option<&mut Conversation>,
) -> Result<(Answer, bool), skillrag_ask::AskError> {
    let mut streamed = false;
    let mut on_text = |text: &str| {
        streamed = true;
        print!("{text}");
        std::io::stdout().flush().ok();
    };
    let answer = assistant.ask(query, options, conversation, Some(&mut on_text))?;
    Ok((answer, streamed))
}

/// Answer text (unless it was streamed already), citations and a one-line route summary.
fn print_answer(answer: &Answer, show_hits: bool, streamed: bool) {
    let fell_back = answer.generation.as_ref().is_some_and(|g| g.fallback.is_some());
    if streamed {
        println!();
    }
    for w in &answer.warnings {
        eprintln!("warning: {w}");
    }
    // A model that failed midway showed part of its (checked) answer; the extractive one follows.
    if !streamed || fell_back {
        println!("{}", answer.answer);
    }
    if !answer.citations.is_empty() {
        println!();
        for c in &answer.citations {
            let picture = c.image.as_ref().map(|p| format!(" (picture {}×{})", p.width, p.height)).unwrap_or_default();
            println!("[{}] {}{picture}", c.n, c.note());
        }
    }
    if show_hits {
        println!();
        for (i, h) in answer.hits.iter().enumerate() {
            println!(
                "  {:>2}. {}/{} #{}  fused {:.4}  bm25 {}  dense {}",
                i + 1,
                h.skill,
                h.location(),
                h.ordinal,
                h.scores.fused,
                h.scores.bm25.map_or("-".into(), |s| format!("{s:.2}")),
                h.scores.dense.map_or("-".into(), |s| format!("{s:.3}"))
            );
        }
    }
    eprintln!("{}", route_summary(answer));
    if let Some(g) = answer.generation.as_ref().filter(|g| g.fallback.is_none()) {
        eprintln!(
            "— {}: {} tokens, {:.1} tokens/s, first token {:.0} ms{}",
            g.model,
            g.completion_tokens,
            g.tokens_per_second,
            g.first_token_ms,
            if g.unsupported.is_empty() {
                String::new()
            } else {
                format!("; {} unsupported sentence(s) left out", g.unsupported.len())
            }
        );
    }
}

/// How a question was routed, and its refusal: `single labor-law (0.98), refusal not_found`.
fn route_how(r: &Route, refusal: Option<&Refusal>) -> String {
    let refusal = refusal.map(|r| format!(", refusal {}", r.kind.as_str())).unwrap_or_default();
    let how = match (&r.gate, r.forced) {
        (Some(g), _) => format!("gate: {g}"),
        (None, true) => format!("skill {} (forced)", r.skills.join(", ")),
        (None, false) => format!("{} {} ({:.2})", r.decision.as_str(), r.skills.join(" + "), r.confidence),
    };
    format!("{how}{refusal}")
}

fn route_summary(answer: &Answer) -> String {
    let how = route_how(&answer.route, answer.refusal.as_ref());
    format!(
        "— {how}; {} attempt(s); {:.1} ms (route {:.1}, retrieve {:.1}, answer {:.1})",
        answer.attempts,
        answer.timings_ms.total,
        answer.timings_ms.route,
        answer.timings_ms.retrieve,
        answer.timings_ms.generate
    )
}

pub fn chat(cli: &Cli, args: &ChatArgs) -> Result<ExitCode> {
    let assistant = open_assistant(cli, !args.no_llm, !args.no_reader)?;
    let state = assistant.engine.project.state_dir();
    let store = ConversationStore::new(&state);
    let feedback = FeedbackLog::new(&state);
    // A resumed conversation's earlier questions lend their topic to the next follow-up.
    let (mut saved, mut conversation) = match &args.resume {
        Some(id) => {
            let saved = store.get(id)?;
            let conversation = assistant.replay(&saved.questions());
            eprintln!("resuming \"{}\" ({} turn(s))", saved.title, saved.turns.len());
            (Some(saved.id), conversation)
        }
        None => (None, Conversation::new()),
    };
    let mut last: Option<Answer> = None;
    let mut skill = args.skill.clone();
    let interactive = std::io::stdin().is_terminal();
    if interactive {
        let skills: Vec<&str> = assistant.engine.skills().iter().map(|s| s.id.as_str()).collect();
        eprintln!("skillrag chat — skills: {}. /help for commands; exit, /quit or Ctrl-D to leave.", skills.join(", "));
    }
    let stdin = std::io::stdin();
    let mut lines = InputLines::new(stdin.lock());
    loop {
        if interactive {
            eprint!("{}> ", skill.as_deref().unwrap_or(""));
            std::io::stderr().flush().ok();
        }
        let Some(line) = lines.next() else { break };
        let line = match line.context("reading stdin")? {
            Ok(line) => line,
            Err(bad) => {
                eprintln!("error: {bad}; skipped");
                continue;
            }
        };
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        if leaves_chat(text) {
            break;
        }
        match text {
            "/help" => {
                eprintln!("{CHAT_HELP}");
                continue;
            }
            "/auto" => {
                skill = None;
                continue;
            }
            "/reset" => {
                conversation = Conversation::new();
                saved = None;
                last = None;
                continue;
            }
            "/history" => {
                for c in store.list()?.iter().take(20) {
                    eprintln!("{}  {:>3} turn(s)  {}", c.id, c.turns, c.title);
                }
                continue;
            }
            _ => {}
        }
        if text == "/skill" {
            eprintln!("/skill NAME: name one of the skills (`skillrag skills` lists them)");
            continue;
        }
        if let Some(name) = text.strip_prefix("/skill ") {
            match assistant.engine.skill(name.trim()) {
                Ok(s) => skill = Some(s.id.clone()),
                Err(e) => eprintln!("{e}"),
            }
            continue;
        }
        if let Some(rest) = judgement_command(text) {
            match judge(&assistant, &feedback, last.as_ref(), rest) {
                Ok(said) => eprintln!("{said}"),
                Err(e) => eprintln!("error: {e}"),
            }
            continue;
        }
        // A mistyped command is not a question: it is neither asked, saved nor logged as a gap.
        if let Some(command) = unknown_command(text) {
            eprintln!("unknown command `{command}`; the commands are:\n{CHAT_HELP}");
            continue;
        }
        let options = AskOptions { skill: skill.clone(), id: None, ..Default::default() };
        let answer = if cli.json {
            assistant.ask(text, &options, Some(&mut conversation), None).inspect(|a| {
                println!("{}", serde_json::to_string(a).unwrap_or_default());
            })
        } else {
            ask_streamed(&assistant, text, &options, Some(&mut conversation)).map(|(answer, streamed)| {
                print_answer(&answer, false, streamed);
                println!();
                answer
            })
        };
        match answer {
            Ok(answer) => {
                // Saved as it goes, so the conversation can be resumed even after a crash.
                // Failing to save is a warning: the chat goes on.
                if saved.is_none() {
                    match store.create(None) {
                        Ok(created) if interactive => {
                            eprintln!("(saved as {0}; `skillrag chat --resume {0}` continues it)", created.id);
                            saved = Some(created.id);
                        }
                        Ok(created) => saved = Some(created.id),
                        Err(e) => eprintln!("warning: the conversation is not saved: {e}"),
                    }
                }
                if let Some(Err(e)) = saved.as_ref().map(|id| store.append(id, text, &answer)) {
                    eprintln!("warning: the turn was not saved: {e}");
                }
                last = Some(answer);
            }
            Err(e) => eprintln!("error: {e}"),
        }
    }
    if let (Some(id), false) = (&saved, cli.json) {
        eprintln!("conversation {id} saved; `skillrag chat --resume {id}` continues it");
    }
    Ok(ExitCode::SUCCESS)
}

const CHAT_HELP: &str = "/skill NAME              answer from one skill
/auto                    route every question
/good                    the last answer was right (its route is confirmed for `skillrag tune`)
/bad [SKILL|none] [why]  the last answer was wrong: SKILL should have answered, or none covers it
/history                 saved conversations (`skillrag chat --resume ID`)
/reset                   start a new conversation
/quit                    leave (or exit, quit, :q, Ctrl-D)";

/// Whether a line leaves the chat: `/quit` and its spellings, the words people type to leave a
/// shell or an editor (`exit`, `quit`, `:q`), and a Ctrl-D that reached us as a character (a
/// terminal in raw mode, or one typed after some text) rather than as the end of input.
fn leaves_chat(text: &str) -> bool {
    let text = text.trim_end_matches(['\u{4}', ' ']).trim();
    text.is_empty()
        || matches!(text.to_lowercase().as_str(), "/quit" | "/exit" | "/q" | "exit" | "quit" | ":q" | ":q!" | ":wq")
}

/// The commands `chat` knows (`/skill NAME`, `/good …`, `/bad …` take arguments).
const CHAT_COMMANDS: &[&str] =
    &["/skill", "/auto", "/good", "/up", "/bad", "/down", "/history", "/reset", "/help", "/quit", "/exit", "/q"];

/// The command of a line that looks like one (`/word…`) but is not a known command. A path such
/// as `/etc/hosts` is not a command.
fn unknown_command(text: &str) -> Option<&str> {
    let command = text.split_whitespace().next()?;
    let name = command.strip_prefix('/')?;
    let looks_like_one = !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '-' || c == '_');
    (looks_like_one && !CHAT_COMMANDS.contains(&command)).then_some(command)
}

/// The rest of a `/good …` or `/bad …` line, with the rating.
fn judgement_command(text: &str) -> Option<(Rating, &str)> {
    let (command, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    match command {
        "/good" | "/up" => Some((Rating::Up, rest.trim())),
        "/bad" | "/down" => Some((Rating::Down, rest.trim())),
        _ => None,
    }
}

/// Stores a `/good` or `/bad [SKILL|none] [comment]` about the last answer.
fn judge(
    assistant: &skillrag_ask::Assistant,
    log: &FeedbackLog,
    last: Option<&Answer>,
    (rating, rest): (Rating, &str),
) -> Result<String> {
    let answer = last.ok_or_else(|| anyhow::anyhow!("no answer yet to judge"))?;
    let (first, after) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    // `/bad SKILL …` names the skill that should have answered, `/bad none …` says none covers it.
    let named = (rating == Rating::Down).then_some(first);
    let (skill, no_skill, comment) = match named {
        Some("none") => (None, true, after.trim()),
        Some(name) => match assistant.engine.skill(name) {
            Ok(s) => (Some(s.id.clone()), false, after.trim()),
            Err(_) => (None, false, rest),
        },
        None => (None, false, rest),
    };
    let judgement = Judgement {
        query: answer.query.clone(),
        answer_id: Some(answer.answer_id.clone()),
        skill: skill.clone(),
        no_skill,
        comment: Some(comment.to_string()),
    };
    log.record(&FeedbackRecord::new(judgement, rating, Some(answer)))
        .with_context(|| log.path().display().to_string())?;
    Ok(match (rating, skill) {
        (Rating::Up, _) => "thanks — noted as a good answer (`skillrag tune` learns from confirmed routes)".into(),
        (Rating::Down, Some(s)) => {
            format!("thanks — noted: `{s}` should have answered (`skillrag tune` learns from it)")
        }
        (Rating::Down, None) if no_skill => {
            "thanks — noted: no skill covers this question (`skillrag tune` learns from it)".into()
        }
        (Rating::Down, None) => "thanks — noted as a bad answer (`skillrag gaps` lists it)".into(),
    })
}

#[derive(serde::Deserialize)]
struct BatchQuestion {
    #[serde(default)]
    id: Option<serde_json::Value>,
    query: String,
    #[serde(default)]
    skill: Option<String>,
}

pub fn batch(cli: &Cli, args: &BatchArgs) -> Result<ExitCode> {
    let assistant = open_assistant(cli, !args.no_llm, !args.no_reader)?;
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut failed = 0usize;
    for (i, line) in InputLines::new(stdin.lock()).enumerate() {
        let line = match line.context("reading stdin")? {
            Ok(line) => line,
            Err(bad) => {
                // Answer every readable line; the unreadable one gets its own error line, with
                // its id when a lossy reading still shows one.
                failed += 1;
                let id = serde_json::from_str::<BatchQuestion>(&bad.lossy).ok().and_then(|q| q.id);
                let error = serde_json::json!({"id": id, "error": format!("line {}: {bad}; not answered", i + 1)});
                writeln!(out, "{error}")?;
                out.flush()?;
                continue;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let text = match serde_json::from_str::<BatchQuestion>(&line) {
            Err(e) => {
                failed += 1;
                serde_json::json!({"id": null, "error": format!("line {}: not a question object ({e})", i + 1)})
                    .to_string()
            }
            Ok(q) => {
                let id = q.id.map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string));
                let options =
                    AskOptions { skill: q.skill.or_else(|| args.skill.clone()), id: id.clone(), ..Default::default() };
                match assistant.ask(&q.query, &options, None, None) {
                    Ok(answer) => serde_json::to_string(&answer)?,
                    Err(e) => {
                        failed += 1;
                        serde_json::json!({"id": id, "query": q.query, "error": e.to_string()}).to_string()
                    }
                }
            }
        };
        writeln!(out, "{text}")?;
        out.flush()?;
    }
    if failed > 0 {
        eprintln!("{failed} question(s) could not be answered; see the \"error\" lines");
    }
    Ok(ExitCode::SUCCESS)
}

pub fn route(cli: &Cli, args: &RouteArgs) -> Result<ExitCode> {
    let assistant = open_assistant(cli, false, false)?;
    let route = assistant.route(&args.query)?;
    if cli.json {
        print_json(&route)?;
        return Ok(ExitCode::SUCCESS);
    }
    print_route(&route, assistant.router().accept);
    Ok(ExitCode::SUCCESS)
}

fn print_route(route: &Route, accept: f32) {
    if let Some(g) = &route.gate {
        println!("gate: {g} (no retrieval)");
        return;
    }
    let mut table = Table::new(&[
        "SKILL",
        "CONFIDENCE",
        "TRIGGERS",
        "PROFILE",
        "DENSE",
        "SPECIFICITY",
        "KNOWLEDGE",
        "KNOWLEDGE DENSE",
        "LANG",
    ]);
    for c in &route.candidates {
        let opt = |v: Option<f32>| v.map_or_else(|| "-".to_string(), |x| format!("{x:.3}"));
        table.row(vec![
            c.skill.clone(),
            format!("{:.3}", c.score),
            if c.keyword_hits.is_empty() { "-".into() } else { truncate(&c.keyword_hits.join(", "), 30) },
            format!("{:.3}", c.profile),
            opt(c.dense),
            format!("{:.3}", c.specificity),
            format!("{:.3}", c.knowledge),
            opt(c.knowledge_dense),
            if c.language_match { "yes".into() } else { "no".into() },
        ]);
    }
    table.print();
    println!(
        "\ndecision: {} {} (confidence {:.3}, accept ≥ {accept:.2})",
        route.decision.as_str(),
        route.skills.join(" + "),
        route.confidence
    );
}

pub fn tune(cli: &Cli, args: &TuneArgs) -> Result<ExitCode> {
    let mut assistant = open_assistant(cli, false, false)?;
    let skills: Vec<String> = assistant.engine.skills().iter().map(|s| s.id.clone()).collect();
    let mut labelled = match &args.labelled {
        Some(path) => skillrag_ask::read_labelled(path, &skills)?,
        None => Vec::new(),
    };
    if !args.no_feedback {
        let log = FeedbackLog::new(&assistant.engine.project.state_dir());
        let (records, unreadable) = log.list().with_context(|| log.path().display().to_string())?;
        if !unreadable.is_empty() {
            eprintln!("warning: {}: {unreadable}", log.path().display());
        }
        let known: std::collections::HashSet<&str> = labelled.iter().map(|l| l.query.as_str()).collect();
        let from_feedback: Vec<_> =
            routing_labels(&records, &skills).into_iter().filter(|l| !known.contains(l.query.as_str())).collect();
        labelled.extend(from_feedback);
    }
    let model = assistant.tune(labelled)?.clone();
    if cli.json {
        print_json(&model)?;
        return Ok(ExitCode::SUCCESS);
    }
    let r = &model.report;
    println!(
        "fitted on {} question(s) ({} labelled, {} drawn from the knowledge, {} skill pairs); regularization {}",
        r.questions, r.labelled, r.synthetic, r.pairs, r.l2
    );
    println!("cross-validated routing accuracy:   {:.3}", r.accuracy);
    println!("near misses rejected (own skill removed): {:.3}", r.near_miss_rejection);
    println!("calibration error (ECE):            {:.3}", r.calibration_error);
    println!("log loss:                           {:.3}", r.log_loss);
    if let Some(f) = &r.feedback {
        println!(
            "feedback: {} question(s) (confirmed routes, corrected misroutes; their own fold): routed right {}/{} \
             before learning from them, {}/{} after",
            f.questions, f.right_before, f.questions, f.right_after, f.questions
        );
    }
    println!(
        "thresholds: accept ≥ {:.2}, ambiguous within {:.2}, evidence ≥ {:.2}",
        model.accept, model.margin, model.evidence
    );
    let weights: Vec<String> =
        model.feature_names.iter().zip(&model.weights).map(|(n, w)| format!("{n} {w:+.2}")).collect();
    println!("weights: {} (bias {:+.2})", weights.join(", "), model.bias);
    eprintln!("saved to {}", assistant.engine.project.state_dir().join("router.json").display());
    Ok(ExitCode::SUCCESS)
}

/// A line of standard input that is not UTF-8: where it breaks, and the line read lossily.
#[derive(Debug)]
struct NotUtf8 {
    offset: usize,
    lossy: String,
}

impl std::fmt::Display for NotUtf8 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not valid UTF-8 (first bad byte at byte {} of the line)", self.offset + 1)
    }
}

/// Lines of input as bytes, so that one bad byte costs its line and not the whole run
/// (`BufRead::lines` ends with an error at the first one).
struct InputLines<R> {
    reader: R,
}

impl<R: BufRead> InputLines<R> {
    fn new(reader: R) -> Self {
        InputLines { reader }
    }
}

impl<R: BufRead> Iterator for InputLines<R> {
    type Item = std::io::Result<Result<String, NotUtf8>>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut bytes = Vec::new();
        match self.reader.read_until(b'\n', &mut bytes) {
            Ok(0) => return None,
            Ok(_) => {}
            Err(e) => return Some(Err(e)),
        }
        if bytes.last() == Some(&b'\n') {
            bytes.pop();
            if bytes.last() == Some(&b'\r') {
                bytes.pop();
            }
        }
        Some(Ok(String::from_utf8(bytes).map_err(|e| NotUtf8 {
            offset: e.utf8_error().valid_up_to(),
            lossy: String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::{leaves_chat, unknown_command, InputLines};

    #[test]
    fn the_ways_to_leave_a_chat_and_unknown_commands() {
        for line in ["exit", "quit", ":q", "/quit", "EXIT", "\u{4}", "exit\u{4}"] {
            assert!(leaves_chat(line), "{line:?}");
        }
        for line in ["how do I exit the setup wizard?", "quitting smoking", "/skill tea"] {
            assert!(!leaves_chat(line), "{line:?}");
        }
        assert_eq!(unknown_command("/frobnicate"), Some("/frobnicate"));
        assert_eq!(unknown_command("/frobnicate now please"), Some("/frobnicate"));
        for line in ["/skill tea", "/bad none wrong", "/auto", "/etc/hosts 是什么？", "试用期多久？", "/"] {
            assert_eq!(unknown_command(line), None, "{line:?}");
        }
    }

    #[test]
    fn a_bad_byte_costs_only_its_line() {
        let input: &[u8] = b"first\r\nsec\xffond\nthird";
        let lines: Vec<_> = InputLines::new(input).map(|l| l.unwrap()).collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0].as_deref().unwrap(), "first");
        let bad = lines[1].as_ref().unwrap_err();
        assert_eq!(bad.offset, 3);
        assert_eq!(bad.lossy, "sec\u{fffd}ond");
        assert!(bad.to_string().contains("byte 4"), "{bad}");
        assert_eq!(lines[2].as_deref().unwrap(), "third");
    }
}
