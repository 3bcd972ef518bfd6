//! The model's chat template (`tokenizer.chat_template`, a Hugging Face Jinja template)
//! rendered with minijinja.

use crate::Message;
use minijinja::{context, Environment, Error, ErrorKind};

/// ChatML, for GGUF files that carry no template (Qwen's format; most instruct models of the
/// supported families understand it).
const CHATML: &str = "{% for message in messages %}{{ '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

pub struct ChatTemplate {
    env: Environment<'static>,
    bos_token: String,
    eos_token: String,
}

impl ChatTemplate {
    /// Compiles `source` (ChatML when `None`). Fails on a template syntax error.
    pub fn new(source: Option<&str>, bos_token: &str, eos_token: &str) -> Result<ChatTemplate, String> {
        let mut env = Environment::new();
        // Hugging Face renders templates with these jinja2 settings; without them whitespace
        // between blocks leaks into the prompt.
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        // Python string methods (`.strip()`, `.startswith()`, ...) the templates call.
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", |message: String| -> Result<String, Error> {
            Err(Error::new(ErrorKind::InvalidOperation, message))
        });
        env.add_template_owned("chat", source.unwrap_or(CHATML).to_string())
            .map_err(|e| format!("the chat template does not compile: {e}"))?;
        Ok(ChatTemplate { env, bos_token: bos_token.to_string(), eos_token: eos_token.to_string() })
    }

    /// The prompt for `messages`, ending with the opening of the assistant's turn.
    pub fn render(&self, messages: &[Message]) -> Result<String, String> {
        let template = self.env.get_template("chat").map_err(|e| e.to_string())?;
        template
            .render(context! {
                messages => messages,
                add_generation_prompt => true,
                bos_token => &self.bos_token,
                eos_token => &self.eos_token,
                tools => (),
            })
            .map_err(|e| format!("cannot render the chat template: {e}"))
    }
}
