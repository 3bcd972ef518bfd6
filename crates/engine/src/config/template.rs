//! The commented `skillrag.toml` that `skillrag init` writes.

use std::path::Path;

/// The file, `{model}` standing for the embedding model.
const TEMPLATE: &str = include_str!("template.toml");

/// The `skillrag.toml` written by `skillrag init`, documenting every setting.
pub fn template(model: Option<&Path>) -> String {
    let model = model.map_or_else(|| "none".to_string(), |m| m.display().to_string());
    TEMPLATE.replace("{model}", &model)
}
