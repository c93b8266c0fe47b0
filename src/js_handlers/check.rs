//! The publish-time check: a JS endpoint's module is loaded in the sandbox, by the engine and
//! under the limits its calls will have ([`sandbox::Sandbox::check`]), before create or PATCH
//! stores it, so code that cannot run is refused at publish rather than on someone's call.
//!
//! A refusal is a [`CompileFailure`]: the engine's message, the line and column in the
//! builder's source (1-based), that line, and a hint for the mistakes builders coming from
//! other platforms make (a JSON-encoded source, CommonJS, imports, TypeScript sent as
//! JavaScript). A Workers `export default { fetch }` is a handler (sandbox/src/isolate.rs), not
//! a mistake.
//!
//! A TypeScript source is transpiled first (`super::typescript`): its syntax errors are
//! refusals at the TypeScript position, and the engine's position in the JavaScript is mapped
//! back, so the builder always sees a line of what they wrote.

use serde::Serialize;

use super::run::{endpoint_code, sandbox_error};
use super::typescript::{self, TranspileError};
use super::EndpointRuntime;
use crate::catalog::{Endpoint, SourceLanguage};
use crate::error::ApiError;

/// Longest source line shown back, in characters.
const MAX_SOURCE_LINE_CHARS: usize = 200;

/// Why a module cannot be published, pointing into the builder's source.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompileFailure {
    #[serde(skip)]
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// The source line at `line`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_line: Option<String>,
    /// What the builder most likely meant, for a recognizable mistake.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<&'static str>,
}

/// The check's outcome when it is not a pass.
#[derive(Debug)]
pub enum CheckError {
    /// The module cannot run: 422 `compile_error`.
    Refused(Box<CompileFailure>),
    /// The check itself could not run (the sandbox is overloaded or failed): its answer.
    Unavailable(ApiError),
}

impl EndpointRuntime {
    /// Loads `endpoint`'s source as its first call would and checks its default export.
    pub async fn check(&self, endpoint: &Endpoint) -> Result<(), CheckError> {
        let Some(source) = endpoint.source.as_deref() else {
            return Ok(());
        };
        let language = endpoint.source_language;
        let refused = |message, position| {
            CheckError::Refused(Box::new(describe(source, language, message, position)))
        };
        let module =
            match typescript::module(language, source.to_owned(), endpoint.owner_builder()).await {
                Ok(module) => module,
                Err(TranspileError::Source { message, position }) => {
                    return Err(refused(message, position))
                }
                Err(TranspileError::Failed(message)) => {
                    return Err(CheckError::Unavailable(ApiError::internal(message)))
                }
            };
        let code = endpoint_code(endpoint, &endpoint.slug, module.js, Default::default());
        let report = self.pool().check(&code).await;
        use sandbox::SandboxError as E;
        let message = match report.result {
            Ok(_) => return Ok(()),
            Err(E::CompileError(message)) => message,
            Err(E::Timeout) => {
                let limit = code.limits.map(|l| l.timeout.as_millis());
                format!(
                    "the module did not finish loading within the time limit{}: top-level \
                     code runs when an isolate starts and must finish quickly",
                    limit.map(|ms| format!(" ({ms} ms)")).unwrap_or_default()
                )
            }
            Err(E::ResourceLimit(what)) => {
                format!("loading the module exceeded a resource limit: {what}")
            }
            Err(other) => return Err(CheckError::Unavailable(sandbox_error(other))),
        };
        let position = report.trace.and_then(|t| t.line.zip(t.column));
        let position = match &module.map {
            Some(map) => position.and_then(|(line, column)| map.original(line, column)),
            None => position,
        };
        Err(refused(message, position))
    }
}

/// The failure as the builder sees it: the engine's position when it has one, else the place
/// a recognized mistake starts.
pub(super) fn describe(
    source: &str,
    language: SourceLanguage,
    message: String,
    position: Option<(u32, u32)>,
) -> CompileFailure {
    let mistake = recognize(source, language, &message);
    let position = position.or_else(|| mistake.and_then(|(_, needle)| find(source, needle)));
    let source_line = position.and_then(|(line, _)| {
        let text = source
            .lines()
            .nth(usize::try_from(line).ok()?.checked_sub(1)?)?;
        Some(match text.char_indices().nth(MAX_SOURCE_LINE_CHARS) {
            Some((cut, _)) => format!("{}…", &text[..cut]),
            None => text.to_owned(),
        })
    });
    CompileFailure {
        message,
        line: position.map(|p| p.0),
        column: position.map(|p| p.1),
        source_line,
        hint: mistake.map(|(hint, _)| hint),
    }
}

/// A hint for a mistake recognizable from the source and the engine's message, with the text
/// where it starts (for a position when the engine gives none).
fn recognize(
    source: &str,
    language: SourceLanguage,
    message: &str,
) -> Option<(&'static str, &'static str)> {
    let trimmed = source.trim();
    if trimmed.starts_with('"') && serde_json::from_str::<String>(trimmed).is_ok() {
        return Some((
            "the source is a JSON string, encoded once too often: send the module's text itself \
             as `source`",
            "\"",
        ));
    }
    if message.starts_with("import of") {
        return Some((
            "a handler is a single module and imports nothing: inline what you need; `fetch`, \
             `URL`, `crypto`, `Response` and the other web globals are built in",
            "import",
        ));
    }
    if ["module", "exports", "require"]
        .iter()
        .any(|name| message.contains(&format!("{name} is not defined")))
    {
        return Some((
            "CommonJS (`module.exports`, `require`) is not supported: write an ES module, \
             `export default async function (req, ctx) { ... }`",
            "module.exports",
        ));
    }
    let typescript = [
        ": string",
        ": number",
        ": any",
        "interface ",
        "type ",
        " as ",
    ];
    if language == SourceLanguage::Javascript
        && message.starts_with("SyntaxError")
        && typescript.iter().any(|t| source.contains(t))
    {
        return Some((
            "this looks like TypeScript: send it with `\"sourceLanguage\": \"typescript\"` \
             (`toolhost deploy` does for a handler.ts)",
            "",
        ));
    }
    if message.contains("export default") {
        return Some((
            "the module's default export must be the handler function, `export default async \
             function (req, ctx) { ... }`, or a Workers-style object, `export default { async \
             fetch(request, env, ctx) { ... } }`",
            "export default",
        ));
    }
    None
}

/// 1-based line and column of the first `needle` in `source`.
fn find(source: &str, needle: &str) -> Option<(u32, u32)> {
    if needle.is_empty() {
        return None;
    }
    source.lines().zip(1u32..).find_map(|(text, line)| {
        let at = text.find(needle)?;
        let column = u32::try_from(text[..at].chars().count()).ok()? + 1;
        Some((line, column))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn describe_js(source: &str, message: String, position: Option<(u32, u32)>) -> CompileFailure {
        describe(source, SourceLanguage::Javascript, message, position)
    }

    #[test]
    fn recognizable_mistakes_get_a_hint_and_a_position() {
        let json = describe_js("\"export default () => 1\"", "x".into(), None);
        assert_eq!((json.line, json.column), (Some(1), Some(1)));
        assert!(json.hint.unwrap().contains("JSON string"));
        let imports = describe_js(
            "// deps\n  import x from 'y';",
            "import of \"y\" is not allowed".into(),
            None,
        );
        assert_eq!((imports.line, imports.column), (Some(2), Some(3)));
        assert_eq!(imports.source_line.as_deref(), Some("  import x from 'y';"));
        // An object without `fetch` is pointed at the default export.
        let object = describe_js(
            "export default {\n  fetchh(r) {}\n}",
            "the module must `export default` a function, or an object with a `fetch` method"
                .into(),
            None,
        );
        assert_eq!((object.line, object.column), (Some(1), Some(1)));
        assert!(object.hint.unwrap().contains("default export"));
        // The engine's position wins over the recognized start.
        let cjs = describe_js(
            "const a = 1;\nmodule.exports = a;",
            "ReferenceError: module is not defined".into(),
            Some((2, 1)),
        );
        assert_eq!((cjs.line, cjs.column), (Some(2), Some(1)));
        assert!(cjs.hint.unwrap().contains("CommonJS"));
        let plain = describe_js("export default ( {", "SyntaxError: x".into(), Some((1, 18)));
        assert_eq!(plain.hint, None);
        // TypeScript sent as JavaScript is pointed at `sourceLanguage`; sent as TypeScript, a
        // syntax error gets no such hint.
        let typed = "export default (req: any) => 1;";
        let sent_as_js = describe_js(typed, "SyntaxError: unexpected token".into(), None);
        assert!(sent_as_js.hint.unwrap().contains("sourceLanguage"));
        let sent_as_ts = describe(
            typed,
            SourceLanguage::Typescript,
            "SyntaxError: x".into(),
            Some((1, 1)),
        );
        assert_eq!(sent_as_ts.hint, None);
        let long = describe_js(&"x".repeat(500), "SyntaxError: x".into(), Some((1, 1)));
        assert_eq!(
            long.source_line.unwrap().chars().count(),
            MAX_SOURCE_LINE_CHARS + 1
        );
    }
}
