//! TypeScript handlers: the builder's TypeScript is what the endpoint stores and its owner sees
//! and edits; the sandbox runs the JavaScript that oxc makes of it (parse, strip the types and
//! lower `enum`s and parameter properties, print with a source map), and every position the
//! sandbox reports (a load error, a failed call's line, column and stack) is mapped back
//! through that map to the TypeScript.
//!
//! The transpiler parses untrusted source in the server's process, and oxc's recursive-descent
//! parser and visitors have no depth limit: a deeply nested source would overflow the stack
//! and abort the server. So a source goes through two guards: a bracket nesting limit (the
//! cheap, common attack: `((((…` within the size limit), and a thread of its own with a stack
//! big enough for the deepest unbracketed chains a source of the largest allowed size can
//! hold (`!!!!…x`, `a=a=…`, `a?b:a?b:…`, measured in `tests/api/typescript.rs`). The JS is
//! printed without indentation, so deep statement nesting cannot make the output quadratic.
//!
//! What a source becomes is bounded too, not only its size. oxc folds each `enum` member to a
//! constant (`A1 = A0 + A0` is printed as the string itself), so members that double each
//! other grow exponentially: 25 of them, under 500 bytes of source, were 1.15 GB in the
//! server and a 64 MiB frame that killed a worker. So the strings the members can fold to are
//! bounded from the syntax before oxc evaluates anything ([`enum_folding`]), and the printed
//! JavaScript is checked against [`MAX_OUTPUT_BYTES`]. With both, a transpile costs time and
//! memory in proportion to the source's size limit.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use oxc::allocator::Allocator;
use oxc::ast::ast::{Expression, Program, TSEnumDeclaration};
use oxc::ast_visit::{walk, Visit};
use oxc::codegen::{Codegen, CodegenOptions, CommentOptions};
use oxc::diagnostics::OxcDiagnostic;
use oxc::parser::Parser;
use oxc::semantic::SemanticBuilder;
use oxc::span::SourceType;
use oxc::transformer::{TransformOptions, Transformer};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::catalog::SourceLanguage;

/// Deepest nesting of parentheses, brackets and braces a TypeScript source may have. Counted
/// on the raw text (brackets in strings and comments count too), far above hand-written code.
const MAX_NESTING: usize = 1_000;

/// The most bytes of string all `enum` members of a source may fold to together: as much as
/// hand-written enums hold many times over (a member's value longer than the whole source can
/// only come from folding).
const MAX_ENUM_FOLD_BYTES: usize = 1 << 20;

/// The most JavaScript a source may become. The source is at most 256 KiB; what oxc prints of
/// it is about as long, plus the folded enum strings.
const MAX_OUTPUT_BYTES: usize = 4 << 20;

/// The transpiling thread's stack: the deepest chains without brackets in a source of the
/// largest size (256 KiB) need about a quarter of this in an optimized build. It is reserved,
/// not touched: only what a source uses becomes memory.
const STACK_BYTES: usize = 1 << 30;

/// Transpiles at once; more wait, so a burst of publishes cannot start many big stacks.
static TRANSPILING: Semaphore = Semaphore::const_new(2);

/// Each builder's turn at the transpiler: one of its transpiles at a time, so a builder
/// publishing in a burst (or in a loop from many connections) holds at most one of the
/// [`TRANSPILING`] places and another builder's publish, or the cold start of its TypeScript
/// endpoint, gets the other. Entries go when nobody holds or waits for them.
static TURNS: LazyLock<Mutex<HashMap<String, Arc<Semaphore>>>> = LazyLock::new(Mutex::default);

/// A builder's turn at the transpiler, held until its transpile ends.
struct Turn {
    builder: String,
    turn: Arc<Semaphore>,
    permit: Option<OwnedSemaphorePermit>,
}

impl Turn {
    async fn take(builder: &str) -> Result<Turn, TranspileError> {
        let turn = {
            let mut turns = TURNS.lock().unwrap_or_else(PoisonError::into_inner);
            let turn = turns.entry(builder.to_owned());
            turn.or_insert_with(|| Arc::new(Semaphore::new(1))).clone()
        };
        let permit = turn
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| TranspileError::Failed(e.to_string()))?;
        Ok(Turn {
            builder: builder.to_owned(),
            turn,
            permit: Some(permit),
        })
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        self.permit.take();
        let mut turns = TURNS.lock().unwrap_or_else(PoisonError::into_inner);
        // The map's and this one's: nobody else holds or waits for it.
        if Arc::strong_count(&self.turn) == 2 {
            turns.remove(&self.builder);
        }
    }
}

/// The CPU priority of a transpiling thread: below every thread that serves calls (nice 0),
/// above a heavy builder's demoted isolates (19). A publish is not a call waiting on an
/// answer within milliseconds, and a builder sending exploding sources in a loop kept a core
/// busy at the calls' priority (each refused source still takes its transpile up to a limit).
const TRANSPILE_NICE: i32 = 10;

/// The name the builder's source has in positions and stack frames.
const TS_FILE: &str = "handler.ts";
/// The sandbox's name for the module it runs, as its stack frames show it.
const JS_FILE: &str = "handler.js";

/// What the sandbox runs for a source: the JavaScript, and for TypeScript the way back.
pub(super) struct Module {
    pub(super) js: String,
    pub(super) map: Option<SourceMap>,
}

/// Why a TypeScript source cannot be transpiled, with its 1-based position when known.
#[derive(Debug)]
pub(super) enum TranspileError {
    /// The source is at fault: a syntax error, or nesting past the guard.
    Source {
        message: String,
        position: Option<(u32, u32)>,
    },
    /// The transpiler could not run (no thread could be started).
    Failed(String),
}

/// The module of `source` in `language`: JavaScript as it is, TypeScript transpiled.
///
/// `builder`, whose source it is (none: the operator's or the admin's), waits for its own turn
/// first ([`TURNS`]).
pub(super) async fn module(
    language: SourceLanguage,
    source: String,
    builder: Option<&str>,
) -> Result<Module, TranspileError> {
    if language == SourceLanguage::Javascript {
        return Ok(Module {
            js: source,
            map: None,
        });
    }
    let turn = match builder {
        Some(builder) => Some(Turn::take(builder).await?),
        None => None,
    };
    let permit = TRANSPILING
        .acquire()
        .await
        .map_err(|e| TranspileError::Failed(e.to_string()))?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("ts-transpile".into())
        .stack_size(STACK_BYTES)
        .spawn(move || {
            // The thread holds the permit: a caller that goes away does not free its place
            // while the thread still runs.
            let _permit = (permit, turn);
            if let Err(err) = rustix::process::setpriority_process(None, TRANSPILE_NICE) {
                tracing::debug!(%err, "the transpiler could not lower its CPU priority");
            }
            // A panic inside oxc ends this thread only; the dropped sender tells the caller.
            let _ = tx.send(transpile(&source));
        })
        .map_err(|e| TranspileError::Failed(format!("cannot start the transpiler: {e}")))?;
    rx.await.unwrap_or_else(|_| {
        Err(TranspileError::Source {
            message: "the TypeScript transpiler failed on this source".into(),
            position: None,
        })
    })
}

/// Parse, strip, print: on the calling thread, which must have [`STACK_BYTES`] of stack.
fn transpile(source: &str) -> Result<Module, TranspileError> {
    nesting(source)?;
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, SourceType::ts().with_module(true)).parse();
    if let Some(error) = parsed.diagnostics.first() {
        return Err(diagnostic(source, error));
    }
    let mut program = parsed.program;
    enum_folding(source, &program)?;
    // The transformer adds scopes (room for them saves a regrow) and needs enum members
    // evaluated to inline them.
    let scoping = SemanticBuilder::new()
        .with_excess_capacity(2.0)
        .with_enum_eval(true)
        .build(&program)
        .semantic
        .into_scoping();
    let transformed =
        Transformer::new(&allocator, Path::new(TS_FILE), &TransformOptions::default())
            .build_with_scoping(scoping, &mut program);
    if let Some(error) = transformed.diagnostics.first() {
        return Err(diagnostic(source, error));
    }
    let printed = Codegen::new()
        .with_options(CodegenOptions {
            source_map_path: Some(TS_FILE.into()),
            indent_width: 0,
            comments: CommentOptions::disabled(),
            ..CodegenOptions::default()
        })
        .build(&program);
    if printed.code.len() > MAX_OUTPUT_BYTES {
        return Err(TranspileError::Source {
            message: format!(
                "transpiling exceeded a resource limit: the JavaScript made of this source \
                 would be {} bytes, over the limit of {MAX_OUTPUT_BYTES}",
                printed.code.len()
            ),
            position: None,
        });
    }
    let map = printed.map.map(|map| SourceMap {
        tokens: map
            .get_tokens()
            .map(|t| {
                [
                    t.get_dst_line(),
                    t.get_dst_col(),
                    t.get_src_line(),
                    t.get_src_col(),
                ]
            })
            .collect(),
    });
    Ok(Module {
        js: printed.code,
        map: Some(map.unwrap_or_default()),
    })
}

/// Refuses nesting past [`MAX_NESTING`], at the bracket that goes past it.
fn nesting(source: &str) -> Result<(), TranspileError> {
    let mut depth = 0usize;
    for (at, byte) in source.bytes().enumerate() {
        match byte {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => continue,
        }
        if depth > MAX_NESTING {
            return Err(TranspileError::Source {
                message: format!(
                    "the source nests parentheses, brackets and braces more than {MAX_NESTING} \
                     levels deep"
                ),
                position: Some(line_column(source, at)),
            });
        }
    }
    Ok(())
}

/// Refuses a source whose `enum` members could fold to more than [`MAX_ENUM_FOLD_BYTES`] of
/// strings, at the member that goes past it. A bound, from the syntax alone, on what oxc's
/// enum evaluation may build: a literal is its length, `a + b` and a template the sum of their
/// parts, and a reference to another member (by name or as `E.x`) as much as the largest
/// member so far, since it can only name one evaluated before it.
fn enum_folding(source: &str, program: &Program<'_>) -> Result<(), TranspileError> {
    let mut folding = EnumFolding::default();
    folding.visit_program(program);
    match folding.over {
        None => Ok(()),
        Some(at) => Err(TranspileError::Source {
            message: format!(
                "transpiling exceeded a resource limit: the enum members of this source fold \
                 to more than {MAX_ENUM_FOLD_BYTES} bytes of strings (each member that is made \
                 of others is printed as the whole string)"
            ),
            position: Some(line_column(source, at as usize)),
        }),
    }
}

/// The running bound of [`enum_folding`].
#[derive(Default)]
struct EnumFolding {
    /// The largest bound of any member so far.
    largest: usize,
    /// The bounds of all members so far, added up.
    total: usize,
    /// Where the total first went past the limit.
    over: Option<u32>,
}

/// What a number folds to, at most (`Number.prototype.toString` is at most 25 characters).
const NUMBER_BYTES: usize = 32;

impl EnumFolding {
    fn bound(&self, expr: &Expression<'_>) -> usize {
        match expr {
            Expression::StringLiteral(literal) => literal.value.len(),
            Expression::TemplateLiteral(template) => {
                let quasis = template.quasis.iter().map(|quasi| {
                    let cooked = quasi.value.cooked.as_ref().map_or(0, |c| c.len());
                    cooked.max(quasi.value.raw.len())
                });
                let parts = template.expressions.iter().map(|e| self.bound(e));
                quasis.chain(parts).fold(0, usize::saturating_add)
            }
            Expression::BinaryExpression(binary) => self
                .bound(&binary.left)
                .saturating_add(self.bound(&binary.right)),
            Expression::UnaryExpression(unary) => self.bound(&unary.argument).max(NUMBER_BYTES),
            Expression::ParenthesizedExpression(inner) => self.bound(&inner.expression),
            Expression::Identifier(_)
            | Expression::StaticMemberExpression(_)
            | Expression::ComputedMemberExpression(_)
            | Expression::PrivateFieldExpression(_) => self.largest.max(NUMBER_BYTES),
            // Anything else is not folded: the member keeps its expression.
            _ => NUMBER_BYTES,
        }
    }
}

impl<'a> Visit<'a> for EnumFolding {
    fn visit_ts_enum_declaration(&mut self, decl: &TSEnumDeclaration<'a>) {
        // oxc evaluates an enum after the declarations nested in its members.
        walk::walk_ts_enum_declaration(self, decl);
        for member in &decl.body.members {
            if self.over.is_some() {
                return;
            }
            let bound = member
                .initializer
                .as_ref()
                .map_or(NUMBER_BYTES, |init| self.bound(init));
            self.largest = self.largest.max(bound);
            self.total = self.total.saturating_add(bound);
            if self.total > MAX_ENUM_FOLD_BYTES {
                self.over = Some(member.span.start);
            }
        }
    }
}

/// oxc's diagnostic as a syntax error at its first label.
fn diagnostic(source: &str, error: &OxcDiagnostic) -> TranspileError {
    let mut message = format!("SyntaxError: {}", error.message);
    if let Some(help) = &error.help {
        message.push_str(&format!(" ({help})"));
    }
    let position = error
        .labels
        .first()
        .map(|label| line_column(source, label.offset() as usize));
    TranspileError::Source { message, position }
}

/// The 1-based line and column (in characters) of a byte offset.
fn line_column(source: &str, offset: usize) -> (u32, u32) {
    let before = source.get(..offset).unwrap_or(source);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.matches('\n').count() + 1;
    let column = before[line_start..].chars().count() + 1;
    let to_u32 = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    (to_u32(line), to_u32(column))
}

/// From positions in the transpiled JavaScript to positions in the TypeScript.
#[derive(Debug, Default)]
pub(super) struct SourceMap {
    /// `[js line, js column, ts line, ts column]`, 0-based, in JS order.
    tokens: Vec<[u32; 4]>,
}

impl SourceMap {
    /// The TypeScript position of a JavaScript one, both 1-based: the nearest mapped place at
    /// or before it on its line, else the line's first.
    pub(super) fn original(&self, line: u32, column: u32) -> Option<(u32, u32)> {
        let (line, column) = (line.checked_sub(1)?, column.saturating_sub(1));
        let start = self.tokens.partition_point(|t| t[0] < line);
        let end = self.tokens.partition_point(|t| t[0] <= line);
        let on_line = &self.tokens[start..end];
        let at = on_line.partition_point(|t| t[1] <= column);
        let token = on_line.get(at.saturating_sub(1))?;
        Some((token[2] + 1, token[3] + 1))
    }

    /// `trace` with its position and frames pointing into the TypeScript.
    pub(super) fn trace(&self, mut trace: sandbox::SourceTrace) -> sandbox::SourceTrace {
        if let Some((line, column)) = trace
            .line
            .zip(trace.column)
            .and_then(|(l, c)| self.original(l, c))
        {
            trace.line = Some(line);
            trace.column = Some(column);
        }
        trace.stack = trace.stack.iter().map(|f| self.frame(f)).collect();
        trace
    }

    /// `at f (handler.js:12:3)` as `at f (handler.ts:L:C)`; a frame it cannot read stays.
    fn frame(&self, frame: &str) -> String {
        let mapped = || {
            let at = frame.rfind(JS_FILE)?;
            let rest = &frame[at + JS_FILE.len()..];
            let rest = rest.strip_prefix(':')?;
            let end = rest
                .find(|c: char| !c.is_ascii_digit() && c != ':')
                .unwrap_or(rest.len());
            let (line, column) = rest[..end].split_once(':')?;
            let (line, column) = self.original(line.parse().ok()?, column.parse().ok()?)?;
            Some(format!(
                "{}{TS_FILE}:{line}:{column}{}",
                &frame[..at],
                &rest[end..]
            ))
        };
        mapped().unwrap_or_else(|| frame.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(source: &str) -> Result<Module, TranspileError> {
        futures::executor::block_on(module(SourceLanguage::Typescript, source.into(), None))
    }

    /// One builder's transpiles take turns; another builder's do not wait for them; a turn
    /// nobody holds or waits for is forgotten.
    #[test]
    fn a_builder_transpiles_one_source_at_a_time() {
        use futures::FutureExt;
        let first = Turn::take("turns-a").now_or_never().unwrap().ok().unwrap();
        let mut second = Box::pin(Turn::take("turns-a"));
        assert!(
            (&mut second).now_or_never().is_none(),
            "waits for the first"
        );
        let other = Turn::take("turns-b").now_or_never().unwrap().ok().unwrap();
        drop(first);
        let second = second.now_or_never().unwrap().ok().unwrap();
        drop((second, other));
        let turns = TURNS.lock().unwrap();
        assert!(!turns.contains_key("turns-a") && !turns.contains_key("turns-b"));
    }

    #[test]
    fn types_enums_and_generics_become_javascript_with_a_map_back() {
        let source = "enum Color { Red, Green = 'g' }\ninterface P { a: number }\n\
                      function id<T>(x: T): T { return x as T; }\n\
                      export default async function (req: any): Promise<P> {\n  \
                      const n = req.input.n as number;\n  throw new Error('boom ' + Color.Red);\n}\n";
        let module = ts(source).unwrap_or_else(|e| panic!("{e:?}"));
        assert!(!module.js.contains("interface"), "{}", module.js);
        assert!(!module.js.contains(": number"), "{}", module.js);
        let map = module.map.unwrap();
        // The `throw` is on line 6 of the TypeScript, wherever the JS put it.
        let (js_line, js_text) = (1u32..)
            .zip(module.js.lines())
            .find(|(_, l)| l.contains("throw"))
            .unwrap();
        let column = u32::try_from(js_text.find("throw").unwrap()).unwrap() + 1;
        assert_eq!(map.original(js_line, column), Some((6, 3)));
        let trace = map.trace(sandbox::SourceTrace {
            line: Some(js_line),
            column: Some(column),
            stack: vec![format!("at default (handler.js:{js_line}:{column})")],
        });
        assert_eq!((trace.line, trace.column), (Some(6), Some(3)));
        assert_eq!(trace.stack, ["at default (handler.ts:6:3)"]);
        assert_eq!(map.frame("at f (ext:x.js:1:2)"), "at f (ext:x.js:1:2)");
    }

    #[test]
    fn syntax_errors_point_at_the_typescript() {
        let Err(TranspileError::Source { message, position }) =
            ts("const a: number = 1;\nlet b: = 2;\n")
        else {
            panic!("accepted")
        };
        assert!(message.starts_with("SyntaxError"), "{message}");
        assert_eq!(position, Some((2, 8)));
    }

    #[test]
    fn deep_brackets_are_refused_before_parsing() {
        let deep = format!(
            "x = {}1{};",
            "(".repeat(MAX_NESTING + 1),
            ")".repeat(MAX_NESTING + 1)
        );
        let Err(TranspileError::Source { message, position }) = ts(&deep) else {
            panic!("accepted")
        };
        assert!(message.contains("levels deep"), "{message}");
        assert_eq!(position, Some((1, 5 + MAX_NESTING as u32)));
        let fine = format!(
            "x = {}1{};",
            "(".repeat(MAX_NESTING),
            ")".repeat(MAX_NESTING)
        );
        assert!(ts(&fine).is_ok());
    }

    /// Members that double each other fold exponentially: refused from the syntax, before oxc
    /// evaluates them (25 members took the server to 1.15 GB), at the member past the limit.
    /// Enums of ordinary size, strings made of strings included, pass.
    #[test]
    fn enum_members_that_fold_past_the_limit_are_refused() {
        let doubling = |members: usize| {
            let mut source = String::from("enum E {\n  A0 = \"abcdefgh\",\n");
            for i in 1..members {
                source.push_str(&format!("  A{i} = A{} + A{},\n", i - 1, i - 1));
            }
            source + "}\nexport default () => E.A1;\n"
        };
        let started = std::time::Instant::now();
        let Err(TranspileError::Source { message, position }) = ts(&doubling(25)) else {
            panic!("accepted")
        };
        assert!(message.contains("resource limit"), "{message}");
        // A reference counts at least as a number's 32 bytes, so member `Ai` is bounded by
        // 32 << i: `A15` (line 17) takes the total past 1 MiB.
        assert_eq!(position, Some((17, 3)));
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
        // Doubled through `E.x` and templates alike.
        let templated = (1..30).fold(String::from("enum T { B0 = 'x' }\n"), |s, i| {
            s + &format!("enum T{i} {{ B = `${{T{}.B}}${{T{}.B}}` }}\n", i - 1, i - 1)
        });
        let templated = templated.replace("T0.B", "T.B0");
        assert!(matches!(ts(&templated), Err(TranspileError::Source { .. })));
        let module = ts(&doubling(10)).unwrap_or_else(|e| panic!("{e:?}"));
        assert!(module.js.contains(&"abcdefgh".repeat(512)));
    }

    #[test]
    fn javascript_passes_as_it_is() {
        let module =
            futures::executor::block_on(module(SourceLanguage::Javascript, "a: b".into(), None))
                .unwrap();
        assert_eq!(module.js, "a: b");
        assert!(module.map.is_none());
    }
}
