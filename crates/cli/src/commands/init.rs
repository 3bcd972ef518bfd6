//! `skillrag init` and `skillrag new`

use super::open_project;
use crate::cli::{Cli, InitArgs, NewArgs};
use anyhow::{bail, Context, Result};
use include_dir::{include_dir, Dir};
use skillrag_engine::config::{self, CONFIG_FILE};
use std::path::Path;
use std::process::ExitCode;

/// The example skills written by `skillrag init`.
static TEMPLATE: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/template");

pub fn init(cli: &Cli, args: &InitArgs) -> Result<ExitCode> {
    let dir = cli.project.join(&args.dir);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let config_path = dir.join(CONFIG_FILE);
    if config_path.exists() && !args.force {
        bail!("{} already exists (use --force to overwrite it; skills are never overwritten)", config_path.display());
    }
    let (model, from) = init_model(cli);
    std::fs::write(&config_path, config::template(model.as_deref()))?;
    let gitignore = dir.join(".gitignore");
    if !gitignore.exists() {
        std::fs::write(&gitignore, ".skillrag/\n.env\n")?;
    }

    let mut created = Vec::new();
    let skills = TEMPLATE.get_dir("skills").context("template has no skills folder")?;
    for skill in skills.dirs() {
        let name = skill.path().file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let target = dir.join("skills").join(name);
        if target.exists() {
            eprintln!("skills/{name} exists; left as it is");
            continue;
        }
        extract(skill, &dir)?;
        created.push(name.to_string());
    }
    eprintln!("created {} with {} example skill(s): {}", dir.display(), created.len(), created.join(", "));
    match &model {
        Some(m) => eprintln!("embedding model: {}{from}", m.display()),
        None => eprintln!(
            "no embedding model found: retrieval is BM25 only until you set [embed] model in {CONFIG_FILE} \
             (scripts/setup-model installs all-MiniLM-L6-v2)"
        ),
    }
    let c = if args.dir == Path::new(".") { String::new() } else { format!(" -C {}", dir.display()) };
    eprintln!("next:\n  skillrag{c} index\n  skillrag{c} search \"试用期最长可以约定多久？\"");
    Ok(ExitCode::SUCCESS)
}

/// The model `init` writes into the configuration, and where it came from: `--embed-model`,
/// then `SKILLRAG_EMBED_MODEL` (what every later command would use anyway), then the copy
/// `scripts/setup-model` installed. `None` is `none`: BM25 only.
fn init_model(cli: &Cli) -> (Option<std::path::PathBuf>, &'static str) {
    let env = std::env::var("SKILLRAG_EMBED_MODEL").ok().filter(|m| !m.trim().is_empty());
    let (chosen, from) = match (&cli.embed_model, env) {
        (Some(m), _) => (m.clone(), ""),
        (None, Some(m)) => (m, " (SKILLRAG_EMBED_MODEL)"),
        (None, None) => return (skillrag_embed::installed_minilm(), ""),
    };
    let none = chosen.trim().eq_ignore_ascii_case("none");
    ((!none).then(|| std::path::PathBuf::from(chosen)), from)
}

fn extract(dir: &Dir<'_>, root: &Path) -> Result<()> {
    for file in dir.files() {
        let path = root.join(file.path());
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, file.contents()).with_context(|| format!("cannot write {}", path.display()))?;
    }
    for sub in dir.dirs() {
        extract(sub, root)?;
    }
    Ok(())
}

pub fn new_skill(cli: &Cli, args: &NewArgs) -> Result<ExitCode> {
    let name = args.name.trim();
    if let Err(why) = skillrag_skill::check_skill_name(name) {
        bail!(why);
    }
    let root = match open_project(cli) {
        Ok(p) => p.config.skill_roots(&p.root).into_iter().next().unwrap_or_else(|| p.root.join("skills")),
        Err(_) => cli.project.join("skills"),
    };
    let dir = root.join(name);
    if dir.exists() {
        bail!("{} already exists", dir.display());
    }
    std::fs::create_dir_all(dir.join("knowledge"))?;
    let text = skillrag_skill::skill_md_template(name, &skillrag_skill::skill_title(name), args.description.as_deref());
    std::fs::write(dir.join("SKILL.md"), text)?;
    // The hint names the project as this command did (`-C demo`), so it runs from the same place.
    let c = match cli.project.as_path() {
        p if p == Path::new(".") => String::new(),
        p => format!(" -C {}", shell_word(&p.display().to_string())),
    };
    eprintln!(
        "created {}: replace the placeholder text in SKILL.md (`skillrag{c} lint` shows where), put documents \
         in knowledge/, then run `skillrag{c} index --skill {name}`",
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `word` quoted for a POSIX shell when it needs it. Hand-written: it only shapes a hint that
/// is printed, and single quotes are the whole of POSIX quoting; a crate is not worth a dependency.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty() && word.chars().all(|c| c.is_alphanumeric() || "-_./:@%+=,".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}
