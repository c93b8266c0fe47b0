mod util;
use serde_json::json;
use util::*;

#[tokio::test]
async fn probe() {
    let (pool, _) = pool();
    let code = endpoint("p", r#"export default async function (req, ctx) {
        const own = Reflect.ownKeys(globalThis).map(String).join(",");
        let proto = []; let o = Object.getPrototypeOf(globalThis);
        while (o) { proto.push(Object.getOwnPropertyNames(o).join(",")); o = Object.getPrototypeOf(o); }
        return { own, proto, ctx: Object.keys(ctx), input: req.input, err: Object.getOwnPropertyNames(Error).join(",") };
    }"#);
    let r = invoke(&pool, &code, json!(1)).await;
    println!("{r:?}");
    // what was there before scrub
    let code = endpoint("q", r#"export default async function () { return 1; }"#);
    let r = invoke(&pool, &code, json!(1)).await;
    println!("{r:?}");
}
