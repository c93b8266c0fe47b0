//! `/healthz`, `/metrics` and the request id: what an operator watches.

use serde_json::{json, Value};

use crate::util::TestServer;

#[tokio::test]
async fn healthz() {
    let server = TestServer::start().await;
    let (status, body) = server.get("/healthz").await;
    assert_eq!(status, 200);
    assert_eq!(body["ok"], true);
}

#[tokio::test]
async fn metrics_count_requests_by_route_and_status() {
    let server = TestServer::start().await;
    server.get("/ai/endpoints").await;
    server.get("/ai/endpoints/nope").await;
    server.get("/tools/receipt-echo").await;
    let text = server.text("/metrics").await;
    assert!(
        text.contains(
            r#"toolhost_http_requests_total{method="GET",route="/ai/endpoints",status="200"} 1"#
        ),
        "{text}"
    );
    assert!(
        text.contains(r#"route="/ai/endpoints/{slug}",status="404""#),
        "{text}"
    );
    assert!(
        text.contains(r#"toolhost_http_request_duration_seconds_bucket{le="#)
            || text.contains("toolhost_http_request_duration_seconds_bucket{"),
        "{text}"
    );
    assert!(text.contains(r#"route="/tools/{slug}""#), "{text}");
}

/// Parameters are documented where the server reads them: a path parameter is a segment of
/// its path (a query struct without `parameter_in = Query` came out as a required path
/// parameter), none can be `null`, a `limit` is at least 1 as the server requires, and a path
/// parameter excludes a literal route's segment (`/ai/endpoints/create`), whose 405 its
/// operations document. Every JSON body documents the body refusals (413, 415). Found by
/// tests/openapi/run.sh (schemathesis).
#[tokio::test]
async fn openapi_parameters_and_body_refusals_are_exact() {
    let server = TestServer::start().await;
    let (_, doc) = server.get("/openapi.json").await;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let empty = vec![];
            let parameters = operation["parameters"].as_array().unwrap_or(&empty);
            for parameter in parameters {
                let name = parameter["name"].as_str().unwrap();
                let place = parameter["in"].as_str().unwrap();
                assert_eq!(
                    place == "path",
                    path.contains(&format!("{{{name}}}")),
                    "{method} {path}: {name} is documented in {place}"
                );
                let types = &parameter["schema"]["type"];
                assert!(
                    !types.as_array().is_some_and(|t| t.contains(&json!("null"))),
                    "{method} {path}: {name} may be null"
                );
                // Every page refuses a `limit` of 0 (400): the document says so too.
                if name == "limit" {
                    assert_eq!(
                        parameter["schema"]["minimum"], 1,
                        "{method} {path}: limit's minimum"
                    );
                }
            }
            if operation.get("requestBody").is_some() {
                for status in ["413", "415"] {
                    assert!(
                        operation["responses"].get(status).is_some(),
                        "{method} {path} does not document {status}"
                    );
                }
            }
        }
    }
    let record = &doc["paths"]["/ai/endpoints/{slug}"];
    for method in ["get", "patch", "delete"] {
        let slug = record[method]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "slug")
            .unwrap();
        assert_eq!(slug["schema"]["pattern"], "^(?!(create)$)", "{method}");
        assert!(record[method]["responses"].get("405").is_some(), "{method}");
    }
}

/// Every route the service mounts is documented, and every documented path is really mounted.
#[tokio::test]
async fn openapi_covers_every_route() {
    let server = TestServer::start().await;
    let (status, doc) = server.get("/openapi.json").await;
    assert_eq!(status, 200);
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"));
    let paths = doc["paths"].as_object().unwrap();
    let mounted = [
        ("get", "/healthz"),
        ("get", "/metrics"),
        ("get", "/ai/endpoints"),
        ("get", "/ai/endpoints/{slug}"),
        ("get", "/ai/manifest"),
        ("get", "/.well-known/x402"),
        ("get", "/.well-known/mcp/server.json"),
        ("get", "/ai/templates/creator-skill"),
        ("get", "/tools/{slug}"),
        ("post", "/tools/{slug}"),
        ("get", "/ai/receipts/{receiptId}"),
        ("get", "/ai/content-safety/policy"),
        ("post", "/ai/mcp"),
        ("post", "/ai/admin/credits"),
        ("get", "/ai/admin/credits"),
        ("get", "/x402/supported"),
        ("post", "/ai/invoke"),
        ("post", "/ai/quote"),
        ("post", "/ai/conversion/quote"),
        ("post", "/x402/quote"),
        ("get", "/ai/builders/revenue"),
        ("get", "/ai/builders/payout-settings"),
        ("post", "/ai/builders/payout-settings"),
        ("get", "/ai/builders/payouts"),
        ("post", "/ai/builders/payouts"),
        ("post", "/ai/admin/payouts/{packetId}/paid"),
        ("get", "/ai/admin/revenue"),
        ("post", "/ai/endpoints/create"),
        ("patch", "/ai/endpoints/{slug}"),
        ("delete", "/ai/endpoints/{slug}"),
        ("get", "/ai/endpoints/{slug}/secrets"),
        ("post", "/ai/endpoints/{slug}/secrets"),
        ("get", "/ai/endpoints/{slug}/logs"),
        ("post", "/ai/builders/register"),
        ("post", "/ai/builders/keys/rotate"),
        ("get", "/ai/builders/events"),
        ("post", "/ai/admin/builders"),
        ("post", "/ai/admin/endpoints/{slug}/review"),
        ("get", "/ai/admin/reviews"),
        ("get", "/toolhost.d.ts"),
    ];
    for (method, path) in mounted {
        assert!(
            paths.get(path).and_then(|p| p.get(method)).is_some(),
            "{method} {path} missing from OpenAPI"
        );
    }
    for (path, item) in paths {
        for method in item.as_object().unwrap().keys() {
            let concrete = path
                .replace("{slug}", "receipt-echo")
                .replace("{receiptId}", "x");
            let request = server.client.request(
                method.to_uppercase().parse().unwrap(),
                server.url(&concrete),
            );
            let response = request
                .header("content-type", "application/json")
                .body("{}")
                .send()
                .await
                .unwrap();
            let status = response.status().as_u16();
            let body: Value = response.json().await.unwrap_or(Value::Null);
            assert!(
                !(status == 404 && body["error"]["code"] == "route_not_found") && status != 405,
                "{method} {path} is documented but not mounted ({status})"
            );
        }
    }
}

/// Every response body the document describes has a shape: no content schema is a bare object
/// (or an empty schema) without properties, so a client generated from the document gets types
/// and schemathesis's `response_schema_conformance` has something to check. The exceptions are
/// bodies whose shape is not the server's to state:
/// - a tool call's 200 (`/tools/{slug}`) is whatever the endpoint's handler returns, described
///   by that endpoint's own `outputSchema` in the catalog, not by this document.
#[tokio::test]
async fn openapi_response_bodies_are_typed() {
    let server = TestServer::start().await;
    let (_, doc) = server.get("/openapi.json").await;
    let handler_defined = [
        ("get", "/tools/{slug}", "200"),
        ("post", "/tools/{slug}", "200"),
    ];
    let resolve = |schema: &Value| -> Value {
        match schema["$ref"].as_str() {
            Some(reference) => {
                let name = reference.trim_start_matches("#/components/schemas/");
                doc["components"]["schemas"][name].clone()
            }
            None => schema.clone(),
        }
    };
    let mut untyped = vec![];
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            for (status, response) in operation["responses"].as_object().unwrap() {
                let Some(content) = response["content"].as_object() else {
                    continue;
                };
                for (media, body) in content {
                    if !media.contains("json") {
                        continue;
                    }
                    let schema = resolve(&body["schema"]);
                    let shaped = ["properties", "allOf", "oneOf", "anyOf", "items", "$ref"]
                        .iter()
                        .any(|k| schema.get(k).is_some())
                        || schema["additionalProperties"].is_object()
                        || schema["type"].as_str().is_some_and(|t| t != "object");
                    let key = (method.as_str(), path.as_str(), status.as_str());
                    if !shaped && !handler_defined.contains(&key) {
                        untyped.push(format!("{method} {path} {status} {media}"));
                    }
                }
            }
        }
    }
    assert!(
        untyped.is_empty(),
        "untyped response bodies:\n{}",
        untyped.join("\n")
    );
    // Answers that carry exactly their fields are closed, including those whose types also
    // deserialize (closed by `http::openapi::complete`, not by serde).
    for name in [
        "Managed",
        "EndpointRecord",
        "Receipt",
        "Event",
        "LogEntry",
        "Packet",
    ] {
        let schema = &doc["components"]["schemas"][name];
        assert_eq!(schema["additionalProperties"], false, "{name}: {schema}");
    }
}

/// Checks `body` against the response schema `/openapi.json` serves for the operation, the way
/// an OpenAPI client (or schemathesis) would: a component named twice, or a field typed
/// narrower than what the server sends, fails here.
fn assert_conforms(doc: &Value, method: &str, path: &str, status: &str, body: &Value) {
    let schema =
        &doc["paths"][path][method]["responses"][status]["content"]["application/json"]["schema"];
    assert!(schema.is_object(), "no schema for {method} {path} {status}");
    let root = json!({"allOf": [schema], "components": doc["components"]});
    let validator = jsonschema::validator_for(&root).expect("the served schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(body)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "{method} {path} {status} does not match its schema:\n{}\n{body}",
        errors.join("\n")
    );
}

#[tokio::test]
async fn answers_match_the_served_openapi_schemas() {
    let server = TestServer::start().await;
    let (_, doc) = server.get("/openapi.json").await;

    for slug in ["receipt-echo", "receipt-echo-paid"] {
        let (status, quote) = server.post("/ai/quote", &json!({"slug": slug})).await;
        assert_eq!(status, 200, "{quote}");
        assert_conforms(&doc, "post", "/ai/quote", "200", &quote);
    }
    let (status, plan) = server
        .post(
            "/ai/conversion/quote",
            &json!({"serviceId": "receipt-echo-paid", "startNetwork": "ethereum", "startAsset": "ETH", "amount": 10}),
        )
        .await;
    assert_eq!(status, 200, "{plan}");
    assert_conforms(&doc, "post", "/ai/conversion/quote", "200", &plan);

    let (_, key) = server.builder("Schema checker").await;
    let who = crate::util::As::Builder(&key);
    for source in [
        "export default async (req) => ({ echoed: req.input })",
        "export default async () => 'a string is a result too'",
        "export default async (req) => req.input.missing.field",
    ] {
        let (status, ran) = server
            .call(
                "POST",
                "/ai/builders/drafts/run",
                who,
                Some(&json!({"source": source, "input": {"a": 1}})),
            )
            .await;
        assert_eq!(status, 200, "{ran}");
        assert_conforms(&doc, "post", "/ai/builders/drafts/run", "200", &ran);
    }
}

/// The log an operator's collector reads from a file has no terminal escape codes in it (a
/// person at a terminal gets colours).
#[test]
fn a_log_written_to_a_file_is_plain_text() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let mut child = Command::new(crate::util::node::BIN)
        .args(["serve", "--addr", "127.0.0.1:0", "--data"])
        .arg(dir.path().join("data"))
        .args(["--admin-token", crate::util::ADMIN_TOKEN])
        .env("RUST_LOG", "info")
        .env_remove("NO_COLOR")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("listening") && stdout.read_line(&mut line).unwrap() > 0 {}
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut text = String::new();
    while !text.contains("toolhost listening") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        text = std::fs::read_to_string(&log).unwrap();
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(text.contains(" INFO ") && text.contains("addr="), "{text}");
    assert!(
        !text.contains('\u{1b}'),
        "escape codes in the log file: {text:?}"
    );
}
