//! TypeScript handlers (`"sourceLanguage": "typescript"`): transpiled at publish, run as
//! JavaScript, shown and edited as TypeScript; a syntax error is refused at its TypeScript
//! line, and a failed call points its owner at the TypeScript line. Hostile sources (deep
//! nesting near the size cap) get a clear answer while neighbours keep answering.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::{assert_compile_error_hinting, assert_error, As, TestServer};

fn ts(slug: &str, source: &str) -> Value {
    json!({
        "slug": slug, "title": "Typed", "description": "A TypeScript handler.",
        "priceUsd": 0, "source": source, "sourceLanguage": "typescript",
        "safetyAttestation": {"accepted": true},
    })
}

/// Types, an interface, an enum, a generic function, `as`, a type alias, a class with a
/// parameter property and a non-null assertion.
const TYPED: &str = r#"interface Input { name?: string; times?: number }
type Shout = (text: string) => string;
enum Mood { Calm = "calm", Loud = "loud" }
function first<T>(items: readonly T[]): T | undefined { return items[0]; }
class Greeter {
  constructor(private readonly greeting: string) {}
  greet(name: string): string { return `${this.greeting}, ${name}!`; }
}
const shout: Shout = (text) => text.toUpperCase();
export default async function (req: { input: Input }, ctx: toolhost.Context) {
  const input = req.input as Input;
  const mood: Mood = (input.times ?? 1) > 2 ? Mood.Loud : Mood.Calm;
  const greeting = new Greeter(first(["Hello", "Hi"])!).greet(input.name ?? "world");
  return { greeting: mood === Mood.Loud ? shout(greeting) : greeting, mood };
}
"#;

const TYPED_V2: &str = r#"type Out = { greeting: string; revision: number };
export default async function (req: { input: { name?: string } }): Promise<Out> {
  return { greeting: `v2 ${req.input.name ?? "world"}`, revision: 2 satisfies number };
}
"#;

#[tokio::test]
async fn a_typescript_handler_answers_and_a_patch_makes_a_new_revision() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = TestServer::start_in(&data).await;
    let (key, created) = server.builder_with("Typist", &ts("typed", TYPED)).await;
    let owner = As::Builder(&key);
    assert_eq!(created["endpoint"]["status"], "active", "{created}");
    let (status, body) = server
        .post("/tools/typed", &json!({"name": "Ada", "times": 3}))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, json!({"greeting": "HELLO, ADA!", "mood": "loud"}));
    let (_, body) = server.post("/tools/typed", &json!({})).await;
    assert_eq!(body, json!({"greeting": "Hello, world!", "mood": "calm"}));

    // The owner sees and edits the TypeScript, not the JavaScript that runs.
    let (status, view) = server.call("GET", "/ai/endpoints/typed", owner, None).await;
    assert_eq!(status, 200);
    assert_eq!(view["manage"]["source"], TYPED, "{view}");
    assert_eq!(view["manage"]["sourceLanguage"], "typescript", "{view}");

    let patched = server
        .patch(owner, "typed", &json!({"source": TYPED_V2}))
        .await;
    assert_eq!(patched["manage"]["revision"], 2, "{patched}");
    let (status, body) = server.post("/tools/typed", &json!({"name": "Bo"})).await;
    assert_eq!(
        (status.as_u16(), body),
        (200, json!({"greeting": "v2 Bo", "revision": 2}))
    );
    // The language is stored with the source: after a restart the TypeScript still runs.
    server.stop().await;
    let server = TestServer::start_in(&data).await;
    let (status, body) = server.post("/tools/typed", &json!({"name": "Re"})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["greeting"], "v2 Re");
    let (_, view) = server.call("GET", "/ai/endpoints/typed", owner, None).await;
    assert_eq!(view["manage"]["sourceLanguage"], "typescript", "{view}");

    // A JavaScript endpoint turned TypeScript by its language alone; and back, where the
    // types no longer parse.
    let js = json!({
        "slug": "was-js", "title": "Was JS", "priceUsd": 0,
        "source": "export default async () => ({ ok: 1 });",
        "safetyAttestation": {"accepted": true},
    });
    server.create(owner, &js).await;
    let (_, view) = server
        .call("GET", "/ai/endpoints/was-js", owner, None)
        .await;
    assert_eq!(view["manage"]["sourceLanguage"], "javascript", "{view}");
    server
        .patch(
            owner,
            "was-js",
            &json!({"sourceLanguage": "typescript",
                    "source": "export default async (): Promise<{ ok: number }> => ({ ok: 2 });"}),
        )
        .await;
    let (_, body) = server.post("/tools/was-js", &json!({})).await;
    assert_eq!(body, json!({"ok": 2}));
    let (status, body) = server
        .call(
            "PATCH",
            "/ai/endpoints/was-js",
            owner,
            Some(&json!({"sourceLanguage": "javascript"})),
        )
        .await;
    assert_compile_error_hinting(status, &body, "sourceLanguage");
    // A language without a source, and an unknown language, are field errors.
    let (status, body) = server
        .call(
            "POST",
            "/ai/endpoints/create",
            owner,
            Some(&json!({"slug": "no-src", "title": "T", "priceUsd": 0,
                         "response": {"a": 1}, "sourceLanguage": "typescript",
                         "safetyAttestation": {"accepted": true}})),
        )
        .await;
    assert_error(status, &body, 422, "invalid_field");
    assert_eq!(
        body["error"]["details"]["field"], "sourceLanguage",
        "{body}"
    );
    let mut bad = ts("bad-lang", TYPED_V2);
    bad["sourceLanguage"] = json!("coffeescript");
    let (status, body) = server
        .call("POST", "/ai/endpoints/create", owner, Some(&bad))
        .await;
    assert_eq!(status, 422, "{body}");
    assert!(body.to_string().contains("sourceLanguage"), "{body}");
}

#[tokio::test]
async fn typescript_errors_at_publish_point_at_the_typescript_line() {
    let server = TestServer::start().await;
    let (_, key) = server.builder("Typo").await;
    let owner = As::Builder(&key);
    let refused = |slug: &'static str, source: &'static str| {
        let server = &server;
        async move {
            let (status, body) = server
                .call(
                    "POST",
                    "/ai/endpoints/create",
                    owner,
                    Some(&ts(slug, source)),
                )
                .await;
            assert_error(status, &body, 422, "compile_error");
            let (status, _) = server.get(&format!("/ai/endpoints/{slug}")).await;
            assert_eq!(status, 404, "{slug}: a refused create stores nothing");
            body["error"]["details"].clone()
        }
    };
    // A syntax error: refused by the transpiler, at the TypeScript position.
    let details = refused(
        "ts-syntax",
        "interface A { a: number }\n\nconst x: A = { a: 1 };\nlet y: = 2;\nexport default () => x;",
    )
    .await;
    assert_eq!(details["field"], "source", "{details}");
    assert_eq!(
        (&details["line"], &details["column"]),
        (&json!(4), &json!(8))
    );
    assert_eq!(details["sourceLine"], "let y: = 2;", "{details}");
    assert!(details.get("hint").is_none(), "{details}");
    // Top-level code that throws while loading: the engine's JS position, mapped back past
    // the lines the types took and the enum's expansion.
    let details = refused(
        "ts-load-throw",
        "interface Config {\n  mode: string;\n}\nenum Level { Low, High }\n\
         const config = null as unknown as Config;\nconst mode: string = config.mode;\n\
         export default () => mode;",
    )
    .await;
    assert_eq!(details["line"], 6, "{details}");
    assert_eq!(details["sourceLine"], "const mode: string = config.mode;");
    // No default-exported function, in TypeScript too.
    let details = refused(
        "ts-no-default",
        "export async function handler(): Promise<number> { return 1; }",
    )
    .await;
    assert!(
        details["hint"].as_str().unwrap().contains("default export"),
        "{details}"
    );

    // PATCH to a broken TypeScript source is refused and the old revision keeps answering.
    server.create(owner, &ts("ts-kept", TYPED_V2)).await;
    let (status, body) = server
        .call(
            "PATCH",
            "/ai/endpoints/ts-kept",
            owner,
            Some(&json!({"source": "export default (): number => {\n  return 1 +;\n};"})),
        )
        .await;
    assert_error(status, &body, 422, "compile_error");
    assert_eq!(body["error"]["details"]["line"], 2, "{body}");
    let (status, body) = server.post("/tools/ts-kept", &json!({"name": "K"})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["greeting"], "v2 K");
}

/// Throws at line 11, column 11 (the `new`), from `check`, called by the default export at
/// line 15; the interface and type lines vanish from the JS and the enum grows.
const THROWS: &str = r#"interface Env {
  MODE?: string;
}
type Mode = "strict" | "lenient";
enum Level {
  Low,
  High,
}
function check(env: Env): void {
  if ((env.MODE as Mode) === "strict")
    throw new Error(`refused at level ${Level.High}`);
}
export default async function (req: unknown, ctx: { env: Env }) {
  const env = ctx.env;
  check(env);
  return { ok: true };
}
"#;

#[tokio::test]
async fn a_failed_typescript_call_shows_its_owner_the_typescript_line() {
    let server = TestServer::start().await;
    let mut body = ts("ts-throws", THROWS);
    body["env"] = json!({"MODE": "strict"});
    let (key, _) = server.builder_with("Diagnosed TS", &body).await;
    let owner = As::Builder(&key);
    let (status, answer) = server.post("/tools/ts-throws", &json!({})).await;
    assert_eq!(status, 500, "{answer}");
    assert_eq!(
        answer["error"]["message"],
        "handler error: refused at level 1"
    );
    let (status, logs) = server
        .call("GET", "/ai/endpoints/ts-throws/logs", owner, None)
        .await;
    assert_eq!(status, 200);
    let error = &logs["entries"][0]["error"];
    assert_eq!(error["code"], "handler_error", "{logs}");
    assert_eq!(
        (error["line"].as_u64(), error["column"].as_u64()),
        (Some(11), Some(11)),
        "{logs}"
    );
    let stack: Vec<&str> = error["stack"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(stack.len(), 2, "{logs}");
    assert!(stack[0].starts_with("at check (handler.ts:11:"), "{logs}");
    assert!(stack[1].starts_with("at default (handler.ts:15:"), "{logs}");
}

#[tokio::test]
async fn hostile_typescript_gets_a_clear_answer_and_neighbours_answer() {
    let server = TestServer::start().await;
    let (_, key) = server.builder("Hostile TS").await;
    let who = As::Builder(&key);
    server.create(who, &ts("ts-neighbour", TYPED_V2)).await;
    let neighbour = server.neighbour_answers("/tools/ts-neighbour", json!({}));
    let hostile = async {
        // Brackets nested near the 256 KiB cap: refused before parsing, at the bracket.
        let started = Instant::now();
        let deep = format!(
            "export default () => {}1{};",
            "(".repeat(120_000),
            ")".repeat(120_000)
        );
        let (status, body) = server
            .call(
                "POST",
                "/ai/endpoints/create",
                who,
                Some(&ts("ts-deep", &deep)),
            )
            .await;
        assert_error(status, &body, 422, "compile_error");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("levels deep"),
            "{body}"
        );
        assert_eq!(body["error"]["details"]["line"], 1, "{body}");
        assert!(started.elapsed() < Duration::from_secs(5));
        // Enum members that double each other: 25 of them (under 500 bytes) once folded to
        // 256 MiB of string in the server and killed a worker with a 64 MiB frame. Refused
        // from the syntax, at publish and for a draft alike, at the member past the limit.
        let started = Instant::now();
        let mut doubling = String::from("enum E {\n  A0 = \"abcdefgh\",\n");
        for i in 1..25 {
            doubling.push_str(&format!("  A{i} = A{} + A{},\n", i - 1, i - 1));
        }
        doubling.push_str("}\nexport default () => ({ n: E.A24.length });\n");
        let draft = json!({"source": doubling, "sourceLanguage": "typescript", "input": {}});
        for (path, body) in [
            ("/ai/endpoints/create", ts("ts-enum-bomb", &doubling)),
            ("/ai/builders/drafts/run", draft),
        ] {
            let (status, body) = server.call("POST", path, who, Some(&body)).await;
            assert_error(status, &body, 422, "compile_error");
            let message = body["error"]["message"].as_str().unwrap();
            assert!(message.contains("resource limit"), "{path}: {body}");
            assert_eq!(body["error"]["details"]["line"], 17, "{path}: {body}");
        }
        assert!(started.elapsed() < Duration::from_secs(5));
        // Chains without brackets, as deep as the cap allows: whatever the answer, it is an
        // answer (the transpiler's thread has the stack for them), not a dead server.
        let chains = [
            format!("export default () => {}1;", "!".repeat(250_000)),
            format!(
                "let a: any;\n{}1;\nexport default () => a;",
                "a=".repeat(120_000)
            ),
            format!("export default () => {}1;", "1+".repeat(120_000)),
            format!("export default () => {}1;", "a?1:".repeat(60_000)),
            format!(
                "let x: {}1{} ;\nexport default () => 1;",
                "A<".repeat(60_000),
                ">".repeat(60_000)
            ),
            format!("{}1;\nexport default () => 1;", "if(1)".repeat(50_000)),
        ];
        for (i, source) in chains.iter().enumerate() {
            let slug = format!("ts-chain-{i}");
            let (status, body) = server
                .call(
                    "POST",
                    "/ai/endpoints/create",
                    who,
                    Some(&ts(&slug, source)),
                )
                .await;
            let code = &body["error"]["code"];
            assert!(
                status == 200 || (status == 422 && code == "compile_error"),
                "{slug}: {status} {code}"
            );
        }
    };
    let (answered, ()) = tokio::join!(neighbour, hostile);
    assert_eq!(answered, 20);
    let (status, _) = server.get("/healthz").await;
    assert_eq!(status, 200);
}
