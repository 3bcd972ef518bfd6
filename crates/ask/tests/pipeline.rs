//! The ask pipeline end to end through the public API, on a temporary embedded project made of
//! the skills in `tests/fixture/skills` (copies of the demo skills `skillrag init` writes):
//! BM25 only (`[embed] model = "none"`) and no LLM, so nothing is downloaded and every answer is
//! the extractive one. The project is opened the way the CLI's `index` then `ask` open it.

use skillrag_ask::{Answer, AskError, AskOptions, Assistant, Conversation, Decision, RefusalKind};
use skillrag_engine::{Engine, IndexOptions, Project, SilentProgress};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use tempfile::TempDir;

/// BM25 only and no LLM: the configuration every test project gets.
const CONFIG: &str = "[embed]\nmodel = \"none\"\n";

/// An indexed project and the assistant answering from it.
struct Demo {
    dir: TempDir,
    assistant: Assistant,
}

impl Demo {
    /// The fixture skills, indexed.
    fn open() -> Demo {
        Demo::open_with(|_| {})
    }

    /// The fixture project shared by the tests that only ask (no test changes it): built once
    /// while any test holds it, since indexing and fitting the router are most of a test's time,
    /// and removed when the last one lets go.
    fn shared() -> Arc<Demo> {
        static SHARED: Mutex<Weak<Demo>> = Mutex::new(Weak::new());
        let mut slot = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(demo) = slot.upgrade() {
            return demo;
        }
        let demo = Arc::new(Demo::open());
        *slot = Arc::downgrade(&demo);
        demo
    }

    /// The fixture skills plus whatever `extend` adds to the skills folder, indexed.
    fn open_with(extend: impl FnOnce(&Path)) -> Demo {
        let dir = tempfile::tempdir().expect("temporary project folder");
        let skills = dir.path().join("skills");
        copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixture/skills"), &skills);
        extend(&skills);
        std::fs::write(dir.path().join("skillrag.toml"), CONFIG).expect("write skillrag.toml");
        // Indexing and asking open the project separately, as `skillrag index` and `skillrag ask` do.
        let report = engine(dir.path()).index(&IndexOptions::default(), &SilentProgress).expect("index");
        assert!(report.skills.iter().all(|s| s.error.is_none()), "every fixture skill indexes");
        let assistant = Assistant::open_with(engine(dir.path()), None).expect("open the assistant").without_gap_log();
        assert!(assistant.generator().is_none(), "no LLM is configured");
        Demo { dir, assistant }
    }

    fn ask(&self, question: &str) -> Answer {
        self.assistant.ask(question, &AskOptions::default(), None, None).expect(question)
    }

    /// Asks `skill` itself (`--skill`): no routing.
    fn ask_skill(&self, question: &str, skill: &str) -> Answer {
        let options = AskOptions { skill: Some(skill.to_string()), id: None, ..Default::default() };
        self.assistant.ask(question, &options, None, None).expect(question)
    }

    fn ask_in(&self, question: &str, conversation: &mut Conversation) -> Answer {
        self.assistant.ask(question, &AskOptions::default(), Some(conversation), None).expect(question)
    }

    /// A cited source's file in the project.
    fn source_file(&self, skill: &str, source: &str) -> PathBuf {
        self.dir.path().join("skills").join(skill).join(source)
    }
}

/// The engine on the project in `root`, with no `SKILLRAG_*` variables from the caller.
fn engine(root: &Path) -> Engine {
    let project = Project::open(root, &BTreeMap::new()).expect("open the project");
    let engine = Engine::open(project).expect("open the engine");
    assert!(engine.model().is_none(), "no embedding model: BM25 only");
    engine
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create folder");
    for entry in std::fs::read_dir(from).expect("read fixture folder").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy fixture file");
        }
    }
}

/// The skills a route chose.
fn skills(a: &Answer) -> Vec<&str> {
    a.route.skills.iter().map(String::as_str).collect()
}

/// The `skill:source` of each citation, in order.
fn cited(a: &Answer) -> Vec<String> {
    a.citations.iter().map(|c| format!("{}:{}", c.skill, c.source)).collect()
}

/// A routed, retrieved and cited answer: no refusal; citations numbered from 1 in order, each
/// used in the text and each naming a retrieved source.
fn assert_answered(a: &Answer) {
    assert!(a.refusal.is_none(), "{}: refused: {:?}", a.query, a.refusal);
    assert!(a.route.gate.is_none() && a.retrieved, "{}: {:?}", a.query, a.route);
    assert!(!a.citations.is_empty(), "{}: no citation: {}", a.query, a.answer);
    let numbers: Vec<usize> = a.citations.iter().map(|c| c.n).collect();
    assert_eq!(numbers, (1..=numbers.len()).collect::<Vec<_>>(), "{}: citations count from [1]", a.query);
    for c in &a.citations {
        assert!(a.answer.contains(&format!("[{}]", c.n)), "{}: [{}] unused in {}", a.query, c.n, a.answer);
        assert!(a.hits.iter().any(|h| h.skill == c.skill && h.source == c.source), "{}: {c:?} not retrieved", a.query);
        assert!(c.context_n >= 1 && a.context.pieces.iter().any(|p| p.n == c.context_n), "{}: {c:?}", a.query);
    }
}

/// An extractive answer only holds the knowledge's own text: every line of each excerpt (the text
/// before each paragraph's `[n]`) occurs, whitespace aside, in the file its citation names.
fn assert_quotes_its_sources(demo: &Demo, a: &Answer) {
    let squash = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    for paragraph in a.answer.split("\n\n").filter(|p| !p.starts_with("相关条文") && !p.starts_with("See also")) {
        let Some(open) = paragraph.rfind('[') else { continue };
        let n: usize = paragraph[open + 1..].trim_end_matches([']', ' ']).parse().expect("a citation marker");
        let c = a.citations.iter().find(|c| c.n == n).expect("the marker's citation");
        let file = demo.source_file(&c.skill, &c.source);
        let source = squash(&std::fs::read_to_string(&file).expect("the cited file"));
        for line in paragraph[..open].lines().map(|l| l.trim_start_matches("- ")).filter(|l| l.chars().count() > 3) {
            assert!(source.contains(&squash(line)), "{line:?} is not in {}", file.display());
        }
    }
}

/// A refusal of `kind`: its message is the answer, nothing is cited.
fn assert_refused(a: &Answer, kind: RefusalKind) {
    let refusal = a.refusal.as_ref().unwrap_or_else(|| panic!("{}: answered, not refused: {}", a.query, a.answer));
    assert_eq!(refusal.kind, kind, "{}: {}", a.query, refusal.message);
    assert_eq!(a.answer, refusal.message, "{}", a.query);
    assert!(a.citations.is_empty(), "{}: a refusal cites nothing: {:?}", a.query, a.citations);
}

#[test]
fn the_gate_answers_small_talk_and_text_operations_without_retrieval() {
    let demo = Demo::shared();
    for (q, kind, reply) in [
        ("你好", "chitchat", "你好！"),
        ("Thanks, that's all.", "chitchat", "Hello!"),
        ("讲个笑话", "chitchat", "你好！"),
        ("帮我润色这段话：我们明天开会。", "rewrite", "改写、翻译、润色"),
        ("Translate \"good morning\" into French", "rewrite", "Rewriting, translating or polishing"),
    ] {
        let a = demo.ask(q);
        assert_eq!(a.route.gate.as_deref(), Some(kind), "{q}: {:?}", a.route);
        assert_eq!(a.route.decision, Decision::None, "{q}");
        assert!(a.route.skills.is_empty() && !a.retrieved && a.hits.is_empty(), "{q}: nothing is searched");
        assert!(a.refusal.is_none() && a.citations.is_empty(), "{q}: {a:?}");
        assert!(a.answer.starts_with(reply), "{q}: a fixed reply in the question's language: {}", a.answer);
    }
    // Without an LLM, small talk points to what the skills can answer.
    assert!(demo.ask("你好").answer.contains("labor-law、router-faq、tea-brewing"));
    // `route` shows the gate's decision too.
    let route = demo.assistant.route("你好").expect("route");
    assert_eq!(route.gate.as_deref(), Some("chitchat"));
    // An empty question is an error, not an answer.
    let empty = demo.assistant.ask(" \n ", &AskOptions::default(), None, None);
    assert!(matches!(empty, Err(AskError::Empty)), "{empty:?}");
}

/// Issue 46 item 3: a greeting to a named skill is small talk, not a question for its knowledge;
/// a text operation named with a skill still goes to the skill (the caller asked for it).
#[test]
fn a_greeting_to_a_named_skill_is_small_talk() {
    let demo = Demo::shared();
    for q in ["hi there", "你好"] {
        let a = demo.ask_skill(q, "labor-law");
        assert_eq!(a.route.gate.as_deref(), Some("chitchat"), "{q}: {:?}", a.route);
        assert!(a.refusal.is_none() && !a.retrieved, "{q}: {a:?}");
    }
    // A skill that does not exist is still an error, greeting or not.
    let unknown = demo.assistant.ask(
        "hi there",
        &AskOptions { skill: Some("nope".into()), id: None, ..Default::default() },
        None,
        None,
    );
    assert!(unknown.is_err(), "{unknown:?}");
    let a = demo.ask_skill("帮我润色这段话：我们明天开会。", "labor-law");
    assert!(a.route.gate.is_none() && a.route.forced && a.retrieved, "{:?}", a.route);
    assert_eq!(skills(&a), ["labor-law"]);
}

#[test]
fn a_question_routed_to_one_skill_is_answered_with_its_citation() {
    let demo = Demo::shared();
    let a = demo.ask("试用期最长可以约定多久？");
    assert_eq!((a.route.decision, skills(&a)), (Decision::Single, vec!["labor-law"]), "{:?}", a.route);
    assert!(a.route.confidence > 0.5 && !a.route.forced, "{:?}", a.route);
    assert_answered(&a);
    assert_eq!(a.citations[0].source, "knowledge/labor-contract-law-03.md", "{:?}", cited(&a));
    assert!(a.answer.starts_with("第十九条"), "the article with its label: {}", a.answer);
    assert!(a.answer.contains("试用期不得超过六个月") && a.answer.contains("试用期不得超过二个月"), "{}", a.answer);
    assert_quotes_its_sources(&demo, &a);

    let a = demo.ask("How do I factory reset the router?");
    assert_eq!((a.route.decision, skills(&a)), (Decision::Single, vec!["router-faq"]), "{:?}", a.route);
    assert_answered(&a);
    assert_eq!(cited(&a), ["router-faq:knowledge/troubleshooting.md"]);
    assert!(a.answer.contains("10 seconds"), "{}", a.answer);
    assert!(!a
        .answer
        .lines()
        .any(|l| l.trim_end_matches(|c: char| c == ']' || c == '[' || c.is_ascii_digit()).ends_with('?')));
    assert_quotes_its_sources(&demo, &a);

    // A table row is answered under its header.
    let a = demo.ask("What does a blinking amber LED mean?");
    assert_answered(&a);
    assert!(a.answer.starts_with("| LED | Meaning |\n|---|---|"), "{}", a.answer);
    assert!(a.answer.contains("| Blinking amber | Factory reset in progress"), "{}", a.answer);

    let a = demo.ask("年休假有几天？");
    assert_answered(&a);
    assert_eq!(a.citations[0].source, "knowledge/paid-annual-leave-regulation-01.md");
    assert!(a.answer.starts_with("第三条") && a.answer.contains("年休假5天"), "{}", a.answer);
    assert!(!a.answer.contains("每个结论"), "a rule of the skill is not an answer: {}", a.answer);

    // `route` decides as `ask` does.
    let route = demo.assistant.route("How do I factory reset the router?").expect("route");
    assert_eq!((route.decision, route.skills), (Decision::Single, vec!["router-faq".to_string()]));
    assert_eq!(route.candidates.len(), 3, "every skill is a candidate: {:?}", route.candidates);
}

#[test]
fn a_compare_question_is_answered_side_by_side() {
    let demo = Demo::shared();
    let a = demo.ask("绿茶和乌龙茶的冲泡水温有什么区别？");
    assert_eq!(skills(&a), ["tea-brewing"], "{:?}", a.route);
    assert_answered(&a);
    let plan: Vec<(usize, &str, &str)> = a.plan.iter().map(|s| (s.step, s.skill.as_str(), s.query.as_str())).collect();
    assert_eq!(plan, [(1, "tea-brewing", "绿茶 冲泡水温"), (2, "tea-brewing", "乌龙茶 冲泡水温")]);
    assert_eq!(a.queries, ["绿茶 冲泡水温", "乌龙茶 冲泡水温"]);
    assert!(a.answer.starts_with("| 比较对象 | 知识库中的依据 |\n|---|---|"), "{}", a.answer);
    let rows: Vec<&str> = a.answer.lines().filter(|l| l.starts_with("| 绿茶") || l.starts_with("| 乌龙茶")).collect();
    assert_eq!(rows.len(), 2, "one row per side: {}", a.answer);
    assert!(rows[0].starts_with("| 绿茶") && rows[0].contains("80–85"), "green tea's own temperature: {}", rows[0]);
    assert!(rows[1].starts_with("| 乌龙茶") && rows[1].contains("95–100"), "oolong's own temperature: {}", rows[1]);
    // Each side cites its own document.
    assert_eq!(
        cited(&a),
        ["tea-brewing:references/green-tea.md", "tea-brewing:references/oolong-and-black-tea.md"],
        "{}",
        a.answer
    );
    assert!(rows[0].ends_with("[1] |") && rows[1].ends_with("[2] |"), "{}", a.answer);

    // An ordinary question with 和 in it is not split.
    let plain = demo.ask("试用期和工资怎么约定？");
    assert!(plain.plan.is_empty(), "{:?}", plain.plan);
    assert_eq!(plain.queries, ["试用期和工资怎么约定？"]);
    assert_answered(&plain);
}

#[test]
fn a_question_with_one_part_per_skill_is_answered_from_each() {
    let demo = Demo::shared();
    let a = demo.ask("试用期最长可以约定多久？另外，绿茶一般要不要洗茶？");
    assert_eq!(a.route.decision, Decision::Multi, "{:?}", a.route);
    assert_eq!(skills(&a), ["labor-law", "tea-brewing"]);
    let parts: Vec<&str> = a.route.parts.iter().map(|p| p.skill.as_str()).collect();
    assert_eq!(parts, ["labor-law", "tea-brewing"]);
    assert_answered(&a);
    assert!(a.answer.contains("试用期不得超过六个月") && a.answer.contains("绿茶一般不需要洗茶"), "{}", a.answer);
    let cited = cited(&a);
    assert!(cited.contains(&"labor-law:knowledge/labor-contract-law-03.md".to_string()), "{cited:?}");
    assert!(cited.contains(&"tea-brewing:references/green-tea.md".to_string()), "{cited:?}");
    assert_quotes_its_sources(&demo, &a);
}

#[test]
fn a_follow_up_keeps_the_previous_topic() {
    let demo = Demo::shared();
    let mut chat = Conversation::new();
    let first = demo.ask_in("How do I update the firmware?", &mut chat);
    assert_answered(&first);
    assert!(first.answer.contains("Check for updates"), "{}", first.answer);
    let follow_up = demo.ask_in("how long does it take?", &mut chat);
    assert_eq!(skills(&follow_up), ["router-faq"], "{:?}", follow_up.route);
    assert_answered(&follow_up);
    assert!(follow_up.queries[0].contains("firmware"), "searched with the topic: {:?}", follow_up.queries);
    assert!(follow_up.answer.contains("five minutes"), "{}", follow_up.answer);
    // The same question alone has no topic to lean on.
    let alone = demo.ask("how long does it take?");
    assert_eq!(alone.queries.first().map(String::as_str), Some("how long does it take?"));
    assert!(!alone.answer.contains("five minutes"), "{}", alone.answer);

    // Rebuilt from the earlier questions alone (as the HTTP server does), the conversation lends
    // the same topic.
    let mut replayed = demo.assistant.replay(&["How do I update the firmware?".to_string()]);
    assert_eq!(replayed.questions()[..], chat.questions()[..1]);
    let again = demo.ask_in("how long does it take?", &mut replayed);
    assert_eq!((&again.queries, &again.answer), (&follow_up.queries, &follow_up.answer));

    // In Chinese: "那…呢？" keeps the skill and the topic's words; a question another skill owns
    // leaves the topic.
    let mut chat = Conversation::new();
    let first = demo.ask_in("用人单位解除劳动合同时，什么情况下要支付经济补偿？", &mut chat);
    assert_eq!(skills(&first), ["labor-law"]);
    let follow_up = demo.ask_in("那试用期呢？", &mut chat);
    assert_eq!(skills(&follow_up), ["labor-law"], "{:?}", follow_up.route);
    assert_answered(&follow_up);
    let query = &follow_up.queries[0];
    assert!(query.contains("试用期") && query.chars().count() > "那试用期呢？".chars().count(), "{query}");
    assert!(follow_up.answer.contains("试用期"), "{}", follow_up.answer);
    let elsewhere = demo.ask_in("绿茶用多少度的水泡？", &mut chat);
    assert_eq!(skills(&elsewhere), ["tea-brewing"], "{:?}", elsewhere.route);
    assert_eq!(elsewhere.queries[0], "绿茶用多少度的水泡？", "a new topic is searched as asked");
    assert_eq!(chat.questions().len(), 3);
}

/// Issue 46 item 1: a follow-up borrows an earlier turn's terms only from the skill it is routed
/// to, and only when they help retrieve there.
#[test]
fn a_follow_up_borrows_nothing_across_skills() {
    let demo = Demo::shared();
    // Across skills: the router question takes nothing from the labour-law turn before it.
    let mut chat = Conversation::new();
    demo.ask_in("用人单位解除劳动合同要支付经济补偿吗？", &mut chat);
    let reset = demo.ask_in("how do i reset it", &mut chat);
    assert_eq!(skills(&reset), ["router-faq"], "{:?}", reset.route);
    assert_eq!(reset.queries.first().map(String::as_str), Some("how do i reset it"), "{:?}", reset.queries);
    assert_answered(&reset);

    // Back to a skill asked about earlier: its own terms, not the last turn's.
    let mut chat = Conversation::new();
    demo.ask_in("How do I update the firmware?", &mut chat);
    demo.ask_in("绿茶用多少度的水泡？", &mut chat);
    let back = demo.ask_in("and how long does the firmware update take?", &mut chat);
    assert_eq!(skills(&back), ["router-faq"], "{:?}", back.route);
    assert!(back.queries.iter().all(|q| !q.contains("绿茶")), "{:?}", back.queries);
    assert!(back.answer.contains("five minutes"), "{:?}: {}", back.queries, back.answer);

    // A fixed skill, then routing again: the router question does not carry the probation terms.
    let mut chat = Conversation::new();
    let fixed = AskOptions { skill: Some("labor-law".into()), id: None, ..Default::default() };
    demo.assistant.ask("试用期最长多久？", &fixed, Some(&mut chat), None).expect("ask");
    let after = demo.ask_in("and how long does it take?", &mut chat);
    assert!(after.queries.iter().all(|q| !q.contains("试用期")), "{:?}", after.queries);
    assert_ne!(after.refusal.as_ref().map(|r| r.kind), Some(RefusalKind::NotFound), "{:?}", after.queries);
}

/// Issue 46 item 1, inside one skill: borrowed terms that push the follow-up's own subject out
/// are dropped.
#[test]
fn a_follow_up_borrows_only_terms_that_help_in_its_skill() {
    let demo = Demo::shared();
    // Inside a skill: terms that push the follow-up's own subject out are not borrowed.
    let mut chat = Conversation::new();
    demo.ask_in("劳动合同期限三年，试用期最长可以约定多久？", &mut chat);
    let pay = demo.ask_in("那经济补偿呢？", &mut chat);
    assert_eq!(skills(&pay), ["labor-law"], "{:?}", pay.route);
    let first = pay.hits.first().map(|h| h.text.as_str()).unwrap_or_default();
    assert!(first.contains("经济补偿") && !first.contains("第十九条"), "{:?}\n{first}", pay.queries);
    let mut chat = Conversation::new();
    demo.ask_in("绿茶用多少度的水泡？", &mut chat);
    let black = demo.ask_in("那红茶呢？", &mut chat);
    assert_answered(&black);
    assert!(black.answer.contains("红茶"), "{:?}: {}", black.queries, black.answer);
}

/// Issue 46 item 2: a question in another language than the skill's knowledge, with a model
/// that cannot match across languages (here none: BM25 only), is refused saying so, and naming
/// the multilingual model that can.
#[test]
fn a_question_in_another_language_than_the_skill_says_why_it_is_refused() {
    let demo = Demo::shared();
    let forced = demo.ask_skill("How long should I steep green tea?", "tea-brewing");
    assert_refused(&forced, RefusalKind::NotFound);
    let message = forced.refusal.as_ref().map(|r| r.message.as_str()).unwrap_or_default();
    assert!(message.contains("in Chinese") && message.contains("multilingual-e5-small"), "{message}");
    assert!(message.contains("scripts/setup-e5 local"), "{message}");
    let routed = demo.ask("How long should I steep green tea?");
    assert_refused(&routed, RefusalKind::OutOfScope);
    let message = routed.refusal.as_ref().map(|r| r.message.as_str()).unwrap_or_default();
    assert!(message.contains("`tea-brewing`") && message.contains("multilingual"), "{message}");
    // A question no skill names gets no such note; nor does one in the skill's own language.
    let elsewhere = demo.ask("Who won the football world cup in 1998?");
    let message = elsewhere.refusal.as_ref().map(|r| r.message.as_str()).unwrap_or_default();
    assert!(!message.contains("multilingual"), "{message}");
    let same = demo.ask_skill("What is the boiling point of mercury?", "router-faq");
    let message = same.refusal.as_ref().map(|r| r.message.as_str()).unwrap_or_default();
    assert!(!message.contains("multilingual"), "{message}");
}

#[test]
fn a_question_no_skill_fits_is_out_of_scope_in_its_language() {
    let demo = Demo::shared();
    let a = demo.ask("股票基金怎么选？");
    assert_refused(&a, RefusalKind::OutOfScope);
    assert_eq!(a.route.decision, Decision::None);
    assert!(a.route.skills.is_empty() && !a.retrieved, "{:?}", a.route);
    assert_eq!(a.answer, "这个问题不在现有技能的范围内（可回答：labor-law、router-faq、tea-brewing）。");

    let a = demo.ask("My ISP bill is wrong, who do I call?");
    assert_refused(&a, RefusalKind::OutOfScope);
    assert!(a.answer.starts_with("This question is outside the scope"), "{}", a.answer);

    // Unrouted, a question about what a skill's SKILL.md excludes is out of scope, with that
    // boundary as the reason.
    let a = demo.ask("工伤认定的申请时限是多久？");
    assert_refused(&a, RefusalKind::OutOfScope);
    assert_eq!(a.route.decision, Decision::None);
    assert!(a.answer.contains("技能「labor-law」不支持") && a.answer.contains("工伤认定"), "{}", a.answer);
}

#[test]
fn a_routed_skill_refuses_what_its_boundary_excludes() {
    let demo = Demo::shared();
    let a = demo.ask_skill("工伤认定的申请时限是多久？", "labor-law");
    assert_refused(&a, RefusalKind::Boundary);
    assert!(a.route.forced && skills(&a) == ["labor-law"], "{:?}", a.route);
    assert!(
        a.answer.starts_with("这超出了技能「labor-law」的知识边界") && a.answer.contains("工伤认定"),
        "{}",
        a.answer
    );
}

#[test]
fn a_fitting_skill_without_the_answer_says_not_found() {
    let demo = Demo::shared();
    let a = demo.ask_skill("What is the boiling point of mercury?", "router-faq");
    assert_refused(&a, RefusalKind::NotFound);
    assert!(a.route.forced && a.retrieved, "{:?}", a.route);
    assert_eq!(a.answer, "Not found in the knowledge base (skill: router-faq).");
    assert!((2..=3).contains(&a.attempts), "weak evidence is retried, at most twice: {}", a.attempts);
    assert_eq!(a.queries.len(), a.attempts, "{:?}", a.queries);

    // Routed, not forced: the skill fits, its knowledge has no overtime rates.
    let a = demo.ask("写一段给员工的说明：周末加班的加班工资按什么标准计算。");
    assert_refused(&a, RefusalKind::NotFound);
    assert_eq!((a.route.decision, skills(&a)), (Decision::Single, vec!["labor-law"]), "{:?}", a.route);
    assert_eq!(a.answer, "知识库中没有找到相关信息（技能：labor-law）。");
}

#[test]
fn two_skills_that_fit_equally_ask_which_one_is_meant() {
    // A second copy of router-faq under another name: every router question fits both equally.
    let demo = Demo::open_with(|skills| {
        let twin = skills.join("router-help");
        copy_dir(&skills.join("router-faq"), &twin);
        let manifest = std::fs::read_to_string(twin.join("SKILL.md")).expect("SKILL.md");
        std::fs::write(twin.join("SKILL.md"), manifest.replace("name: router-faq", "name: router-help"))
            .expect("write SKILL.md");
    });
    let a = demo.ask("How do I factory reset the router?");
    assert_refused(&a, RefusalKind::Ambiguous);
    assert_eq!(a.route.decision, Decision::Ambiguous);
    assert_eq!(skills(&a), ["router-faq", "router-help"]);
    assert!(!a.retrieved && a.hits.is_empty(), "nothing is searched before the user says which");
    assert!(a.answer.contains("`router-faq` (Product support") && a.answer.contains("`router-help` (Product support"));
    assert!(a.answer.ends_with("Which one do you mean?"), "{}", a.answer);
    assert_eq!(
        demo.assistant.route("How do I factory reset the router?").expect("route").decision,
        Decision::Ambiguous
    );
    // Asked of one of them, it is answered.
    let forced = demo.ask_skill("How do I factory reset the router?", "router-help");
    assert_answered(&forced);
    assert_eq!(cited(&forced), ["router-help:knowledge/troubleshooting.md"]);
    // The other skills' questions are not affected.
    let a = demo.ask("试用期最长可以约定多久？");
    assert_eq!((a.route.decision, skills(&a)), (Decision::Single, vec!["labor-law"]), "{:?}", a.route);
}
