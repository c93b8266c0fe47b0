//! The publish-time check (`Sandbox::check`): a module loads as a call's cold start would,
//! under the same limits, and what is wrong with it comes back with its position; the
//! handler is never called, and neighbours keep answering whatever the module did.

mod util;

use std::time::{Duration, Instant};

use sandbox::{Sandbox, SandboxError, SourceTrace};
use serde_json::json;
use util::*;

async fn check(
    sandbox: &Sandbox,
    source: &str,
) -> (Result<u16, SandboxError>, Option<SourceTrace>) {
    let report = sandbox.check(&endpoint("checked", source)).await;
    (report.result.map(|r| r.status), report.trace)
}

async fn neighbour_answers(mode: &str, sandbox: &Sandbox) {
    let report = sandbox
        .invoke(&endpoint("neighbour", ECHO), request(json!(1)))
        .await;
    assert_eq!(ok(report).body, json!({ "echo": 1 }), "{mode}");
}

#[tokio::test]
async fn a_module_that_loads_passes_without_its_handler_being_called() {
    for (mode, sandbox, host) in both_modes(test_config()) {
        // The handler would write to kv if it were called.
        let source = "export default async (req, ctx) => { await ctx.kv.set('called', 1); };";
        assert_eq!(check(&sandbox, source).await.0, Ok(204), "{mode}");
        assert!(host.kv.lock().unwrap().is_empty(), "{mode}");
        neighbour_answers(mode, &sandbox).await;
    }
}

#[tokio::test]
async fn broken_modules_fail_with_their_position() {
    for (mode, sandbox, _) in both_modes(test_config()) {
        for (source, line, column) in [
            ("const a = 1;\nexport default function ( {", 2, 28),
            ("type X = { a: number };\nexport default () => 1;", 1, 6),
            ("module.exports = function () {};", 1, 1),
            (
                "\n\nthrow new Error('at load');\nexport default () => 1;",
                3,
                7,
            ),
        ] {
            let (result, trace) = check(&sandbox, source).await;
            assert!(
                matches!(result, Err(SandboxError::CompileError(_))),
                "{mode} {source}: {result:?}"
            );
            let trace = trace.unwrap_or_else(|| panic!("{mode} {source}: no trace"));
            assert_eq!(
                (trace.line, trace.column),
                (Some(line), Some(column)),
                "{mode} {source}"
            );
            assert!(trace.stack[0].contains("handler.js:"), "{trace:?}");
        }
        for source in [
            "export default { async handle(request) { return new Response('x'); } };",
            "\"export default () => 1\"",
            "import x from 'lodash';\nexport default () => x;",
        ] {
            let (result, _) = check(&sandbox, source).await;
            assert!(
                matches!(result, Err(SandboxError::CompileError(_))),
                "{mode} {source}: {result:?}"
            );
        }
        neighbour_answers(mode, &sandbox).await;
    }
}

#[tokio::test]
async fn hostile_top_level_code_is_stopped_at_the_call_limits() {
    for (mode, sandbox, _) in both_modes(test_config()) {
        let started = Instant::now();
        let (result, _) = check(&sandbox, "for (;;) {}\nexport default () => 1;").await;
        assert_eq!(result, Err(SandboxError::Timeout), "{mode}");
        // The call's time limit (1.5 s) plus the grace, not more.
        assert!(started.elapsed() < Duration::from_secs(4), "{mode}");
        let (result, _) = check(
            &sandbox,
            "const keep = []; for (;;) keep.push(new Array(1e5).fill(1));\nexport default () => 1;",
        )
        .await;
        assert!(
            matches!(result, Err(SandboxError::ResourceLimit(_))),
            "{mode}: {result:?}"
        );
        // 250 KiB of nesting: the parser's own stack limit answers, the process lives on.
        let deep = format!(
            "export default () => {}1{};",
            "(".repeat(125_000),
            ")".repeat(125_000)
        );
        let (result, _) = check(&sandbox, &deep).await;
        assert!(result.is_err(), "{mode}: {result:?}");
        neighbour_answers(mode, &sandbox).await;
    }
}

#[tokio::test]
async fn a_thrown_error_reports_where_in_the_handler() {
    let (pool, _) = pool();
    let source = "const a = 1;\nfunction inner() {\n  throw new Error('boom ' + a);\n}\nexport default () => inner();";
    let report = invoke(&pool, &endpoint("thrower", source), json!(null)).await;
    assert_eq!(
        report.result,
        Err(SandboxError::HandlerError("boom 1".into()))
    );
    let trace = report.trace.expect("a trace");
    assert_eq!((trace.line, trace.column), (Some(3), Some(9)));
    assert!(
        trace.stack.iter().all(|f| f.contains("handler.js")),
        "{trace:?}"
    );
    assert_eq!(trace.stack.len(), 2, "{trace:?}");
}
