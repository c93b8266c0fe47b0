//! `runtime-js/50_regexp_split.js` replaces QuickJS's `RegExp.prototype[Symbol.split]` with a
//! fast path for unmodified RegExps. These tests hold it to the original: the same split runs
//! once on a plain RegExp (fast path) and once on a copy with an extra own property, which the
//! fast path hands to the built-in, and both results must be equal, over patterns with
//! captures, empty matches, lookarounds, unicode and sticky flags, and every kind of limit.

mod util;

use serde_json::json;
use util::*;

const DIFFERENTIAL: &str = r#"
const PATTERNS = [
  /\s+/, /\s*/, /(\s)/, /(?:)/, /a|/, /(a)?b/, /x*/g, /\b/, /(?<=a)/, /(?=b)/, /./u, /./,
  /[\uD800-\uDFFF]/, /\u{1F600}/u, /()/, /,/y, /(a)(b)?/d, /$/m, /^/m, /(?:ab)*/i, /(-)|(\+)/,
  /a/gimsuy, /\d+/, /(?<word>\w+)\s/, /\p{L}/u, /[^]/, /ab|a/, /(?:)/u, /$/, /^/,
];
const STRINGS = [
  "", "a b  c", " lead", "trail ", "aXbXc", "\u{1F600}a\u{1F600}", "\uD83D", "a\nb\nc",
  "ababab", "a,b,,c,", "1+2-3", "ab", "b", "a", "hello world foo", "x", "\u00e9t\u00e9 \u00e0",
  "  many   spaces   here  ", "\uDE00\uD83D", "aaa",
];
const LIMITS = [undefined, 0, 1, 2, 3, 100, -1, 2 ** 32 + 1, "2", null, 1.5];

function slow(pattern) {
  const copy = new RegExp(pattern);
  copy.marker = true; // an own property: the fast path declines
  return copy;
}

export default function () {
  const mismatches = [];
  let checked = 0;
  for (const pattern of PATTERNS) {
    for (const s of STRINGS) {
      for (const limit of LIMITS) {
        const fast = s.split(new RegExp(pattern), limit);
        const reference = s.split(slow(pattern), limit);
        checked++;
        if (JSON.stringify(fast) !== JSON.stringify(reference) || !Array.isArray(fast)) {
          mismatches.push({ pattern: String(pattern), s, limit: String(limit), fast, reference });
        }
      }
    }
  }
  // Random strings over a small alphabet, with the common patterns.
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
  for (let i = 0; i < 300; i++) {
    let s = "";
    const n = next() % 24;
    for (let j = 0; j < n; j++) s += " ab,\n\u{1F600}"[next() % 7];
    for (const pattern of [/\s+/, /,/, /(,)/, /b*/, /\s*/u, /(?:)/u]) {
      const fast = s.split(new RegExp(pattern));
      const reference = s.split(slow(pattern));
      checked++;
      if (JSON.stringify(fast) !== JSON.stringify(reference)) {
        mismatches.push({ pattern: String(pattern), s, fast, reference });
      }
    }
  }
  return { checked, mismatches: mismatches.slice(0, 5) };
}
"#;

#[tokio::test]
async fn fast_split_equals_the_builtin_algorithm() {
    let (pool, _) = pool();
    let result = body(&pool, &endpoint("split-diff", DIFFERENTIAL), json!(null)).await;
    assert_eq!(result["mismatches"], json!([]), "{result}");
    assert!(result["checked"].as_u64().unwrap() > 7000, "{result}");
}

#[tokio::test]
async fn patched_regexp_behaviour_is_honoured() {
    let (pool, _) = pool();
    let code = endpoint(
        "split-patched",
        r#"export default function () {
            const plain = "a1b2c".split(/\d/);
            const originalExec = RegExp.prototype.exec;
            let calls = 0;
            RegExp.prototype.exec = function (s) { calls++; return originalExec.call(this, s); };
            const patched = "a1b2c".split(/\d/);
            RegExp.prototype.exec = originalExec;
            class Sub extends RegExp {}
            const sub = "a1b2c".split(new Sub("\\d"));
            const symbol = (() => { try { "a".split({ [Symbol.split]: RegExp.prototype[Symbol.split] }); return "no error"; } catch (e) { return e.constructor.name; } })();
            const descriptor = Object.getOwnPropertyDescriptor(RegExp.prototype, Symbol.split);
            return { plain, patched, calls, sub, symbol, name: descriptor.value.name,
                     installed: !String(descriptor.value).includes("[native code]"),
                     length: descriptor.value.length, writable: descriptor.writable,
                     enumerable: descriptor.enumerable, configurable: descriptor.configurable };
        }"#,
    );
    let result = body(&pool, &code, json!(null)).await;
    // The fast path is what handlers get (so the differential test compares two paths).
    assert_eq!(result["installed"], json!(true));
    assert_eq!(result["plain"], json!(["a", "b", "c"]));
    assert_eq!(result["patched"], json!(["a", "b", "c"]));
    // The built-in sticky scan calls the patched exec once per position tried.
    assert!(result["calls"].as_u64().unwrap() >= 5, "{result}");
    assert_eq!(result["sub"], json!(["a", "b", "c"]));
    // Not a RegExp: the built-in runs, building a RegExp from it with flags "undefinedy".
    assert_eq!(result["symbol"], json!("SyntaxError"));
    assert_eq!(result["name"], json!("[Symbol.split]"));
    assert_eq!(result["length"], json!(2));
    assert_eq!(
        (
            &result["writable"],
            &result["enumerable"],
            &result["configurable"]
        ),
        (&json!(true), &json!(false), &json!(true))
    );
}
