// TEMPORARY probe, to be deleted.
use deno_core::*;
use std::time::Instant;

#[op2(fast)]
fn op_probe_add(a: u32, b: u32) -> u32 {
    a + b
}

extension!(
    probe_ext,
    ops = [op_probe_add],
    js = ["ext:probe_ext/x.js" = {
        source = "globalThis.__probe = { hello: 'world', add: (a,b) => Deno.core.ops.op_probe_add(a,b) };"
    }]
);

fn main() {
    let t = Instant::now();
    let _first = JsRuntime::new(RuntimeOptions {
        extensions: vec![probe_ext::init()],
        ..Default::default()
    });
    println!("first fresh: {:?}", t.elapsed());
    let t = Instant::now();
    for _ in 0..20 {
        let _r = JsRuntime::new(RuntimeOptions {
            extensions: vec![probe_ext::init()],
            ..Default::default()
        });
    }
    println!("fresh avg: {:?}", t.elapsed() / 20);
    let t = Instant::now();
    let snap = JsRuntimeForSnapshot::new(RuntimeOptions {
        extensions: vec![probe_ext::init()],
        ..Default::default()
    });
    let blob = snap.snapshot();
    println!(
        "snapshot created in {:?}: {} bytes",
        t.elapsed(),
        blob.len()
    );
    let blob: &'static [u8] = Box::leak(blob);
    let t = Instant::now();
    for _ in 0..20 {
        let r = JsRuntime::try_new(RuntimeOptions {
            extensions: vec![probe_ext::init()],
            startup_snapshot: Some(blob),
            ..Default::default()
        });
        if let Err(e) = &r {
            println!("restore error: {e}");
            return;
        }
    }
    println!("from snapshot avg: {:?}", t.elapsed() / 20);
    let mut rt = JsRuntime::new(RuntimeOptions {
        extensions: vec![probe_ext::init()],
        startup_snapshot: Some(blob),
        ..Default::default()
    });
    let r = rt.execute_script("<p>", "JSON.stringify([typeof Deno, typeof __probe, __probe && __probe.hello, __probe && __probe.add(2,3)])");
    match r {
        Ok(v) => {
            deno_core::scope!(scope, rt);
            let v = v8::Local::new(scope, v);
            println!("after restore: {}", v.to_rust_string_lossy(scope));
        }
        Err(e) => println!("exec error: {e}"),
    }
}
