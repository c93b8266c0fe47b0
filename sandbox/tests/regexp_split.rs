//! `String.prototype.split` with a regular expression, whose engine takes a shorter path when
//! the splitter is a plain RegExp (third_party/README.md, "`split` by a RegExp without `exec`
//! at every position"): the same answers as the specification's steps, which the engine
//! still follows when a script could observe them.

mod util;

use sandbox::SandboxError;
use serde_json::{json, Value};
use util::*;

/// Every case split twice in one isolate: first as it comes (the short path), then with
/// `RegExp.prototype.exec` wrapped (the specification's steps, the wrapper observing every
/// call); the two must agree, and the first must match what the handler expects.
const CASES: &str = r#"
const cases = [
    ["The quick  brown\tfox\n jumps", /\s+/],
    ["  leading and trailing  ", /\s+/],
    ["", /\s+/],
    ["", /x*/],
    ["abc", /x*/],
    ["abc", /(?:)/],
    ["a1b22c333", /\d+/],
    ["a1b22c333", /(\d)(\d)?/],
    ["a,b;c,,d", /[,;]/],
    ["a,b;c,,d", /([,;])/g],
    ["AbcaBC", /b/i],
    ["line1\nline2\r\nline3", /\r?\n/m],
    ["héllo wörld ünïcode", / /],
    ["x\u{1F600}y\u{1F600}z", /\u{1F600}/u],
    ["aXbXc", /x/iy],
    ["one two three four", /\s/, 2],
    ["one two three four", /(\s)/, 3],
    ["one two three four", /\s/, 0],
    ["aaa", /a*?/],
    ["aaa", /(a)|(b)/],
    ["ab".repeat(1000), /b/],
];
const run = () => cases.map(([s, re, lim]) => s.split(re, lim));
"#;

#[tokio::test]
async fn split_by_a_regexp_answers_as_the_specification_steps_do() {
    let (pool, _) = pool();
    let code = endpoint(
        "regexp-split",
        &format!(
            r#"{CASES}
            export default async function () {{
                const plain = run();
                const exec = RegExp.prototype.exec;
                let calls = 0;
                RegExp.prototype.exec = function (s) {{ calls++; return exec.call(this, s); }};
                const observed = run();
                RegExp.prototype.exec = exec;
                return {{ plain, observed, calls, words: plain[0], limited: plain.slice(15, 18) }};
            }}"#
        ),
    );
    let answer = body(&pool, &code, json!(null)).await;
    assert_eq!(answer["plain"], answer["observed"]);
    // The wrapped `exec` saw the specification's steps: a call at every position tried.
    assert!(answer["calls"].as_u64().unwrap() > 2000, "{answer}");
    assert_eq!(
        answer["words"],
        json!(["The", "quick", "brown", "fox", "jumps"])
    );
    assert_eq!(
        answer["limited"],
        json!([["one", "two"], ["one", " ", "two"], Value::Array(vec![])])
    );
}

/// A splitter a script can reach (a RegExp subclass, whose species makes the splitter) is
/// still split through its `exec`.
#[tokio::test]
async fn a_regexp_subclass_still_splits_through_its_exec() {
    let (pool, _) = pool();
    let code = endpoint(
        "regexp-split-subclass",
        r#"class Counting extends RegExp {
            exec(s) { Counting.calls++; return super.exec(s); }
        }
        Counting.calls = 0;
        export default async function () {
            const parts = "a b c".split(new Counting(" "));
            return { parts, calls: Counting.calls };
        }"#,
    );
    let answer = body(&pool, &code, json!(null)).await;
    assert_eq!(answer, json!({ "parts": ["a", "b", "c"], "calls": 5 }));
}

/// A split of a long string is interrupted by the call's time limit like any other work.
#[tokio::test]
async fn a_long_split_still_ends_at_the_time_limit() {
    let (pool, _) = pool();
    let code = endpoint(
        "regexp-split-forever",
        r#"export default async function () {
            const s = "ab".repeat(1 << 12);
            for (;;) s.split(/b/);
        }"#,
    );
    assert_eq!(
        err(invoke(&pool, &code, json!(null)).await),
        SandboxError::Timeout
    );
}
