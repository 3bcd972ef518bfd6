//! Command-line syntax. `--help` on any command explains it with an example.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "skillrag",
    version,
    about = "A local-first knowledge assistant built from skills.",
    long_about = "A local-first knowledge assistant built from skills.\n\n\
        Each skill is a folder with a SKILL.md (what it answers, when it fires, where its knowledge \
        ends) and its own knowledge base. skillrag indexes every skill into a hybrid BM25 + vector \
        index and retrieves inside the right skill.",
    after_help = "Quick start:\n  skillrag init demo\n  skillrag -C demo index\n  skillrag -C demo search \"试用期最长多久\"\n\n\
        Settings come from skillrag.toml, .env and SKILLRAG_* variables (e.g. SKILLRAG_EMBED_MODEL);\n\
        flags override them."
)]
pub struct Cli {
    /// Run as if started in DIR (the project folder), like `git -C`.
    #[arg(short = 'C', long = "project", global = true, value_name = "DIR", default_value = ".")]
    pub project: PathBuf,

    /// Print machine-readable JSON on stdout.
    #[arg(long, global = true)]
    pub json: bool,

    /// Embedding model folder, or `none` for BM25 only (overrides SKILLRAG_EMBED_MODEL).
    #[arg(long, global = true, value_name = "DIR|none")]
    pub embed_model: Option<String>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Create a project with skillrag.toml and three example skills.
    #[command(after_help = "Example:\n  skillrag init my-assistant && skillrag -C my-assistant index")]
    Init(InitArgs),
    /// Create a new skill folder with a SKILL.md to fill in.
    #[command(after_help = "Example:\n  skillrag new hr-policies")]
    New(NewArgs),
    /// Check every SKILL.md and knowledge folder; print `file:line: message`.
    #[command(after_help = "Exits with status 1 when any error is found.")]
    Lint(LintArgs),
    /// Build or update the per-skill indexes (incremental; safe to interrupt).
    #[command(
        after_help = "Examples:\n  skillrag index\n  skillrag index --skill labor-law --rebuild\n  skillrag index --watch      # keep the indexes current while you edit the knowledge\n\nKnowledge files: Markdown, text, PDF, DOCX, HTML and FAQ tables (csv/tsv/json/jsonl).\nBroken files are reported with their path and skipped; the rest indexes."
    )]
    Index(IndexArgs),
    /// Retrieve chunks inside skills, with the BM25/dense/fused score of every hit.
    #[command(
        after_help = "Examples:\n  skillrag search \"试用期最长多久\" --skill labor-law\n  skillrag search \"reset the router\" --mode bm25 --k 3 --json"
    )]
    Search(SearchArgs),
    /// List the skills: description, triggers, files, chunks and index freshness; turn one off or on.
    #[command(
        after_help = "A disabled skill is listed, keeps its index and is never routed to or answered from; the\nfile `.disabled` in its folder says so (delete it, or use --enable). A running server sees\nthe change when it next reopens (the page's Skills tab does both at once).\n\nExamples:\n  skillrag skills\n  skillrag skills --disable tea-brewing\n  skillrag skills --enable tea-brewing"
    )]
    Skills(SkillsArgs),
    /// Print the text a knowledge file yields (PDF, DOCX, HTML, FAQ table, Markdown, text, and
    /// scans and pictures through OCR).
    #[command(
        after_help = "Shows what indexing would see: the text in reading order with page marks, FAQ pairs,\nthe title and the detected encoding — or why the file would be skipped. Scanned pages and\npictures (PNG, JPEG, WebP, TIFF) are read by OCR when Tesseract is installed\n(scripts/setup-ocr); --json gives each OCR'd page's confidence.\n\nExamples:\n  skillrag extract manual.pdf\n  skillrag extract faq.csv --json\n  skillrag extract scan.pdf --ocr-languages chi_sim+eng"
    )]
    Extract(ExtractArgs),
    /// List the documents of one skill's index with their chunk counts.
    #[command(after_help = "Example:\n  skillrag sources labor-law")]
    Sources(SourcesArgs),
    /// Answer one question: routed, retrieved, cited — or refused with a reason.
    #[command(
        after_help = "With an LLM configured ([llm] in skillrag.toml, or SKILLRAG_LLM_BASE_URL + SKILLRAG_LLM_MODEL,\nor SKILLRAG_LLM_GGUF), the model writes the answer from the same context; each sentence is\nchecked against the passage it cites before it is printed. See docs/llm.md.\n\nExamples:\n  skillrag ask \"试用期最长可以约定多久？\"\n  skillrag ask \"How do I reset the router?\" --json\n  SKILLRAG_LLM_BASE_URL=http://127.0.0.1:11434/v1 SKILLRAG_LLM_MODEL=qwen2.5:7b skillrag ask \"年休假有几天？\"\n  skillrag ask \"年休假有几天？\" --no-llm"
    )]
    Ask(AskArgs),
    /// Compile a skill's context for a task: instructions, boundary and tiered knowledge, no answer.
    #[command(
        after_help = "What an agent that is about to perform the task needs from the right skill: the task is routed\nlike `ask` (or goes to --skill), and the skill's instructions and boundary are printed with its\nknowledge in tier order (rules → examples → references) under the budget, each piece labelled\n[n] with its source, then what was left out. A task no skill covers is refused as `ask` refuses it.\nThe same is served as `POST /v1/context` and the MCP tool `compile_context` (docs/agents.md).\n\nExamples:\n  skillrag context \"写一份试用期约定的说明\"\n  skillrag context \"Draft the reset steps for a support reply\" --skill router-faq --budget 1500\n  skillrag context \"年休假有几天？\" --json"
    )]
    Context(ContextArgs),
    /// Chat in a loop; follow-ups such as "那试用期呢？" keep the previous skill and key terms.
    #[command(after_help = "Type /help inside the chat for its commands.")]
    Chat(ChatArgs),
    /// Answer JSONL questions from stdin ({"id": "...", "query": "..."}), one JSON answer per line, in order.
    #[command(after_help = "Example:\n  echo '{\"id\": \"1\", \"query\": \"年休假有几天？\"}' | skillrag batch")]
    Batch(BatchArgs),
    /// Show the dispatcher's decision and every signal for every skill.
    #[command(after_help = "Example:\n  skillrag route \"试用期不签劳动合同违法吗？\"")]
    Route(RouteArgs),
    /// Fit the router from the skills' examples (and an optional labelled file); print accuracy and calibration.
    #[command(
        after_help = "The labelled file holds JSON lines {\"query\": \"...\", \"skill\": \"labor-law\" | null}.\nNever tune on the questions you evaluate on."
    )]
    Tune(TuneArgs),
    /// Evaluate on a benchmark folder (skills/ + queries.jsonl): routing, hit@k, refusals, latency.
    #[command(after_help = EVAL_HELP)]
    Eval(EvalArgs),
    /// Serve the HTTP API, an OpenAI-compatible chat endpoint, MCP and a web page.
    #[command(
        after_help = "Examples:\n  skillrag serve                          # http://127.0.0.1:8080 (web page at /)\n  skillrag serve --port 9000 --allow-writes   # documents can be uploaded and deleted from the page\n  SKILLRAG_API_TOKEN=$(openssl rand -hex 24) skillrag serve --addr 0.0.0.0:8080\n\nOpenAI clients: base_url http://127.0.0.1:8080/v1, model skillrag/auto or skillrag/<skill>.\nMCP clients: streamable HTTP at /mcp (or `skillrag mcp` over stdio).\nEndpoints and error codes: docs/http-api.md. Settings: [serve] in skillrag.toml."
    )]
    Serve(ServeArgs),
    /// Serve the knowledge tools to an MCP client over stdin/stdout.
    #[command(
        // From the server's own tool list, so the help names every tool it serves.
        after_help = skillrag_server::mcp::stdio_help()
    )]
    Mcp,
    /// List the questions the skills could not answer (not_found, out_of_scope), most frequent first.
    #[command(
        after_help = "Questions are logged by ask, chat, batch, serve and mcp ([ask] gaps = true).\n\nExample:\n  skillrag gaps --skill labor-law --limit 20"
    )]
    Gaps(GapsArgs),
    /// Copy the indexes to another store (embedded ⇄ PostgreSQL) without re-embedding.
    #[command(after_help = "Copies each skill's published generation — chunks, vectors, ids — so the copy answers\n\
        exactly like the original. Then point `store` (skillrag.toml or SKILLRAG_STORE) at the target.\n\n\
        Examples:\n  skillrag migrate --to postgres://skillrag@db.internal:5432/skillrag\n  \
        SKILLRAG_STORE=postgres://skillrag@db.internal/skillrag skillrag migrate --to embedded")]
    Migrate(MigrateArgs),
    /// Verify every checksum of every skill's index and of the embedding cache; repair with --repair.
    #[command(
        long_about = "Verify every checksum of every skill's index and of the embedding cache.\n\n\
            Each generation of a skill's index lists the size and BLAKE3 hash of its files (vectors, chunks, \
            BM25 segments) in checksums.json; each embedding cache record carries its own checksum. doctor reads \
            them all and says, per skill, what is damaged and what it would repair. Nothing changes without --repair.",
        after_help = "Exits with status 1 while anything is damaged.\n\n\
            --repair moves a damaged generation (or a bad CURRENT, or a file where a folder belongs) aside as\n\
            NAME.corrupt-TIME, rebuilds the skill from its knowledge files, and drops damaged cache records\n\
            (their texts are embedded again). `skillrag index --rebuild` repairs the same way.\n\n\
            Examples:\n  skillrag doctor\n  skillrag doctor --repair\n  skillrag doctor --json"
    )]
    Doctor(DoctorArgs),
}

#[derive(Args, Debug)]
pub struct DoctorArgs {
    /// Move damaged files aside and rebuild the damaged skills from their knowledge files.
    #[arg(long)]
    pub repair: bool,
}

#[derive(Args, Debug)]
pub struct MigrateArgs {
    /// Target store: `embedded` (this project's .skillrag/index) or a postgres:// URL.
    #[arg(long, value_name = "STORE")]
    pub to: String,
    /// Source store (default: the configured `store`).
    #[arg(long, value_name = "STORE")]
    pub from: Option<String>,
    /// Only these skills (repeatable; default: every indexed skill).
    #[arg(long = "skill", short = 's', value_name = "ID")]
    pub skills: Vec<String>,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on (default 127.0.0.1:8080 or [serve] addr); beyond loopback requires SKILLRAG_API_TOKEN.
    #[arg(long, value_name = "HOST:PORT", conflicts_with = "port")]
    pub addr: Option<String>,
    /// Port to listen on, on 127.0.0.1 (the host of [serve] addr when set); 0 picks a free one.
    #[arg(long, value_name = "N")]
    pub port: Option<u16>,
    /// Let the API and the web page upload and delete knowledge documents (then re-index).
    #[arg(long)]
    pub allow_writes: bool,
    /// Largest document upload in MiB (with --allow-writes).
    #[arg(long, value_name = "MIB", default_value_t = 64)]
    pub max_upload_mb: usize,
    /// Requests per minute per client address (0 = unlimited).
    #[arg(long, value_name = "N")]
    pub rate_limit: Option<u32>,
    /// Questions and searches worked on at once (default: one per CPU core).
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// Requests that may wait before the server answers 503.
    #[arg(long, value_name = "N")]
    pub queue: Option<usize>,
    /// Largest request body in KiB (larger ones get 413).
    #[arg(long, value_name = "KIB")]
    pub max_body_kb: Option<usize>,
    /// Allow this browser origin to call the API (repeatable; CORS is off without it).
    #[arg(long = "cors-origin", value_name = "URL")]
    pub cors_origins: Vec<String>,
}

#[derive(Args, Debug)]
pub struct GapsArgs {
    /// Only this skill's gaps.
    #[arg(long, short = 's')]
    pub skill: Option<String>,
    /// At most this many.
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
}

#[derive(Args, Debug)]
pub struct InitArgs {
    /// Folder to create the project in (relative to -C).
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// Write skillrag.toml even if one exists.
    #[arg(long)]
    pub force: bool,
}

#[derive(Args, Debug)]
pub struct NewArgs {
    /// Skill name: lowercase letters, digits and hyphens (it becomes the folder name).
    pub name: String,
    /// One-sentence description of what the skill answers.
    #[arg(long)]
    pub description: Option<String>,
}

#[derive(Args, Debug)]
pub struct LintArgs {
    /// Only these skills (folder names); default all.
    pub skills: Vec<String>,
}

#[derive(Args, Debug)]
pub struct IndexArgs {
    /// Only this skill (repeatable); default all.
    #[arg(long = "skill", short = 's', value_name = "SKILL")]
    pub skills: Vec<String>,
    /// Re-chunk and re-embed everything instead of only what changed.
    #[arg(long)]
    pub rebuild: bool,
    /// Chunk size in characters (overrides the configuration, not a skill's own setting).
    #[arg(long, value_name = "CHARS")]
    pub chunk_size: Option<usize>,
    /// Chunk overlap in characters.
    #[arg(long, value_name = "CHARS")]
    pub chunk_overlap: Option<usize>,
    /// Keep running and re-index a skill within a second or two of a change to its files
    /// (each round is incremental and switches generations atomically). Ctrl-C stops.
    #[arg(long)]
    pub watch: bool,
    /// With --watch: wait this long after the last change before re-indexing.
    #[arg(long, value_name = "MS", default_value_t = 500, requires = "watch")]
    pub debounce_ms: u64,
}

#[derive(Args, Debug)]
pub struct SearchArgs {
    /// The question or keywords.
    pub query: String,
    /// Search only this skill (repeatable); default every skill.
    #[arg(long = "skill", short = 's', value_name = "SKILL")]
    pub skills: Vec<String>,
    /// Number of hits.
    #[arg(long, short = 'k')]
    pub k: Option<usize>,
    /// Retrieval lists to use.
    #[arg(long, value_parser = ["hybrid", "bm25", "dense"], default_value = "hybrid")]
    pub mode: String,
    /// Only sources matching this glob (relative to the skill folder), e.g. `knowledge/*-law-*.md`.
    #[arg(long, value_name = "GLOB")]
    pub source: Option<String>,
    /// Only this document type: general, faq, legal, technical (repeatable).
    #[arg(long = "doc-type", value_name = "TYPE")]
    pub doc_types: Vec<String>,
    /// Only sources under this folder of the skill, e.g. `knowledge/rules`.
    #[arg(long = "dir", value_name = "DIR")]
    pub directory: Option<String>,
    /// RRF weight of the BM25 list.
    #[arg(long)]
    pub bm25_weight: Option<f32>,
    /// RRF weight of the dense list.
    #[arg(long)]
    pub dense_weight: Option<f32>,
    /// Show whole chunks instead of a snippet.
    #[arg(long)]
    pub full: bool,
}

#[derive(Args, Debug)]
pub struct ExtractArgs {
    /// The file.
    pub file: PathBuf,
    /// Languages OCR reads scans and pictures in, Tesseract's names joined by `+`
    /// (`chi_sim+eng`, `chi_tra`, `eng`); default: `[index] ocr_languages`, else the language of
    /// the skill the file is in, else Simplified Chinese and English.
    #[arg(long, value_name = "LANGS")]
    pub ocr_languages: Option<String>,
}

#[derive(Args, Debug)]
pub struct SkillsArgs {
    /// Turn these skills off: not routed to or answered from; their index is kept.
    #[arg(long, value_name = "SKILL")]
    pub disable: Vec<String>,
    /// Turn these disabled skills back on (and index what changed while they were off).
    #[arg(long, value_name = "SKILL", conflicts_with = "disable")]
    pub enable: Vec<String>,
}

#[derive(Args, Debug)]
pub struct SourcesArgs {
    /// The skill.
    pub skill: String,
}

#[derive(Args, Debug)]
pub struct AskArgs {
    /// The question.
    pub query: String,
    /// Answer from this skill only (skips routing).
    #[arg(long, short = 's')]
    pub skill: Option<String>,
    /// Also print the retrieved hits with their scores.
    #[arg(long)]
    pub hits: bool,
    /// Answer extractively even when an LLM is configured ([llm] in skillrag.toml).
    #[arg(long)]
    pub no_llm: bool,
    /// Leave the reader out ([reader] in skillrag.toml, SKILLRAG_READER): the lexical evidence
    /// decides alone, as without one.
    #[arg(long)]
    pub no_reader: bool,
}

#[derive(Args, Debug)]
pub struct ContextArgs {
    /// The task, in the user's words.
    pub task: String,
    /// Compile this skill's context (skips routing).
    #[arg(long, short = 's')]
    pub skill: Option<String>,
    /// Budget in the configured unit: the local LLM's tokens when one is configured, else
    /// characters (default: [llm] context_tokens or context_chars).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=skillrag_ask::MAX_CONTEXT_BUDGET as u64))]
    pub budget: Option<u64>,
}

#[derive(Args, Debug)]
pub struct ChatArgs {
    /// Start with this skill fixed (change with /skill NAME, back to routing with /auto).
    #[arg(long, short = 's')]
    pub skill: Option<String>,
    /// Answer extractively even when an LLM is configured.
    #[arg(long)]
    pub no_llm: bool,
    /// Leave the reader out ([reader] in skillrag.toml, SKILLRAG_READER): the lexical evidence
    /// decides alone, as without one.
    #[arg(long)]
    pub no_reader: bool,
    /// Continue a saved conversation (its id is printed when a chat ends; /history lists them).
    #[arg(long, value_name = "ID")]
    pub resume: Option<String>,
}

#[derive(Args, Debug)]
pub struct BatchArgs {
    /// Answer every question from this skill only.
    #[arg(long, short = 's')]
    pub skill: Option<String>,
    /// Answer extractively even when an LLM is configured.
    #[arg(long)]
    pub no_llm: bool,
    /// Leave the reader out ([reader] in skillrag.toml, SKILLRAG_READER): the lexical evidence
    /// decides alone, as without one.
    #[arg(long)]
    pub no_reader: bool,
}

#[derive(Args, Debug)]
pub struct RouteArgs {
    /// The question.
    pub query: String,
}

#[derive(Args, Debug)]
pub struct TuneArgs {
    /// Labelled questions to fit on as well (JSON lines with "query" and "skill").
    #[arg(long, value_name = "FILE")]
    pub labelled: Option<PathBuf>,
    /// Leave out users' feedback (`.skillrag/feedback.jsonl`: confirmed routes and corrected
    /// misroutes, used by default in a fold of their own).
    #[arg(long)]
    pub no_feedback: bool,
}

#[derive(Args, Debug)]
pub struct EvalArgs {
    /// Benchmark folder with skills/ and queries.jsonl.
    pub bench: PathBuf,
    /// Where to write report.md, report.json, chart.svg and answers.jsonl (default: .skillrag/eval/<bench>/report).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Score this answers file (JSONL in the answer format) side by side: FILE or FILE=NAME (repeatable).
    #[arg(long, value_name = "FILE[=NAME]")]
    pub compare: Vec<String>,
    /// Only the first N questions (for a quick look), and the first N leave-gold-out ones.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Answer extractively even when an LLM is configured.
    #[arg(long)]
    pub no_llm: bool,
    /// Leave the reader out ([reader] in skillrag.toml, SKILLRAG_READER): the lexical evidence
    /// decides alone, as without one.
    #[arg(long)]
    pub no_reader: bool,
    /// Also ask the fact questions again of a copy of the skills without their gold files:
    /// each must be refused (see below).
    #[arg(long)]
    pub leave_gold_out: bool,
    /// With --leave-gold-out: the share of each skill's gold files to leave out (more than 0, at most 1).
    #[arg(long, value_name = "SHARE", default_value_t = skillrag_eval::leave_gold_out::DEFAULT_SHARE, requires = "leave_gold_out")]
    pub share: f64,
    /// With --leave-gold-out: the seed of the draw; the same seed leaves out the same files.
    #[arg(long, default_value_t = skillrag_eval::leave_gold_out::DEFAULT_SEED, requires = "leave_gold_out")]
    pub seed: u64,
}

const EVAL_HELP: &str = "\
Leave-gold-out (--leave-gold-out): does a skill refuse when its knowledge lacks the answer?
  For each skill, a share (--share) of the files named by its fact rows' gold_sources is left
  out of a copy of the benchmark's skills. Each fact row whose gold files are all left out is
  asked again of that copy as an unanswerable question (its id + \"-lgo\"), and the right
  outcome is a refusal. The report's \"Leave-gold-out\" section counts those answered anyway,
  per skill, and lists them with the documents they cited: what the skill says when it should
  say it does not know.

  It runs in the same run as the normal evaluation, after it, and writes one report: a
  knowledge owner needs both numbers together, since a skill can refuse more only by answering
  less. report.json holds it under `leave_gold_out`, the answers go to
  answers-leave-gold-out.jsonl. The copy (skills/, queries.jsonl) and its index live in
  .skillrag/eval/<bench>-leave-gold-out/, always in the embedded store, so the indexes of a
  shared PostgreSQL store are left alone; it reuses the benchmark's embedding cache, so only
  the chunking is done again.

  The draw is deterministic: each skill draws with SplitMix64 seeded from --seed and its id,
  so a skill's removed files depend on nothing else. It differs from Python's random.sample
  (the reference script leave-gold-out.py), so the same seed there removes other files.

Examples:
  skillrag eval ../shared/bench/dev --compare bench/results/peer-dev.jsonl=seed-pipeline
  skillrag eval ../shared/bench/dev --leave-gold-out
  skillrag eval ../shared/bench/dev --leave-gold-out --share 0.5 --seed 11";
