//! Where in the handler's source an error arose ([`SourceTrace`]), for the endpoint's owner.
//!
//! Callers see an error's message only; the owner also gets its position and the frames of the
//! stack that are in the handler's own module. Frames of the runtime glue (`ext:` scripts) are
//! dropped: they say nothing about the builder's code and would show the sandbox's insides.

use serde::{Deserialize, Serialize};

use crate::loader::HANDLER_SPECIFIER;

/// Frames kept from one stack.
const MAX_FRAMES: usize = 16;
/// Longest frame kept, in characters (a frame names a function the handler chose).
const MAX_FRAME_CHARS: usize = 200;

/// The position of an error in the handler's source and the stack frames in it, innermost
/// first. Lines and columns are 1-based, as the engine reports them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceTrace {
    /// Line of the innermost frame in the handler's module.
    pub line: Option<u32>,
    /// Column of that frame.
    pub column: Option<u32>,
    /// The frames in the handler's module, e.g. `at default (handler.js:3:14)`.
    pub stack: Vec<String>,
}

impl SourceTrace {
    /// The handler's frames of an `Error.stack` text; `None` when none is in its module.
    pub(crate) fn from_stack(stack: &str) -> Option<SourceTrace> {
        let frames: Vec<&str> = stack
            .lines()
            .map(str::trim)
            .filter(|line| line.starts_with("at ") && line.contains(HANDLER_SPECIFIER))
            .take(MAX_FRAMES)
            .collect();
        let (line, column) = frames.first().and_then(|f| position(f))?;
        Some(SourceTrace {
            line: Some(line),
            column: Some(column),
            stack: frames.iter().map(|f| frame_text(f)).collect(),
        })
    }

    /// The handler's frames of an error the engine raised while loading the module.
    pub(crate) fn from_js_error(error: &deno_core::error::JsError) -> Option<SourceTrace> {
        let frames: Vec<_> = error
            .frames
            .iter()
            .filter(|f| f.file_name.as_deref() == Some(HANDLER_SPECIFIER))
            .take(MAX_FRAMES)
            .collect();
        let first = frames.first()?;
        let to_u32 = |n: Option<i64>| n.and_then(|n| u32::try_from(n).ok());
        Some(SourceTrace {
            line: to_u32(first.line_number),
            column: to_u32(first.column_number),
            stack: frames
                .iter()
                .map(|f| {
                    let name = f.function_name.as_deref().unwrap_or("<anonymous>");
                    let line = f.line_number.unwrap_or(0);
                    let column = f.column_number.unwrap_or(0);
                    frame_text(&format!("at {name} ({HANDLER_SPECIFIER}:{line}:{column})"))
                })
                .collect(),
        })
    }
}

/// `handler.js` rather than the full specifier, cut to [`MAX_FRAME_CHARS`].
fn frame_text(frame: &str) -> String {
    let short = HANDLER_SPECIFIER.trim_start_matches("file:///");
    let text = frame.replace(HANDLER_SPECIFIER, short);
    match text.char_indices().nth(MAX_FRAME_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// `(line, column)` of `...handler.js:LINE:COLUMN` or `...handler.js:LINE:COLUMN)`.
fn position(frame: &str) -> Option<(u32, u32)> {
    let at = frame.rfind(HANDLER_SPECIFIER)? + HANDLER_SPECIFIER.len();
    let rest = frame[at..].strip_prefix(':')?;
    let rest = rest.trim_end_matches(')');
    let (line, column) = rest.split_once(':')?;
    Some((line.parse().ok()?, column.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_handlers_frames_only() {
        let stack = "TypeError: nope\n    at inner (file:///handler.js:3:14)\n    at \
                     default (file:///handler.js:7:5)\n    at dispatch \
                     (ext:toolhost/90_bootstrap.js:91:24)";
        let trace = SourceTrace::from_stack(stack).unwrap();
        assert_eq!((trace.line, trace.column), (Some(3), Some(14)));
        assert_eq!(
            trace.stack,
            ["at inner (handler.js:3:14)", "at default (handler.js:7:5)"]
        );
        assert_eq!(
            SourceTrace::from_stack("    at file:///handler.js:1:1")
                .unwrap()
                .line,
            Some(1)
        );
        assert!(SourceTrace::from_stack("Error: x\n    at f (ext:toolhost/x.js:1:2)").is_none());
        assert!(SourceTrace::from_stack("").is_none());
    }
}
