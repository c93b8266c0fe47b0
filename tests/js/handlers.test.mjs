// Node tests for the fixture handlers in fixtures/handlers/*.js.
// Run: cd tests/js && node --test
//
// Each handler is imported as an ES module and called with a mock ctx that
// mirrors the sandbox's: in-memory kv, files backed by
// fixtures/handler-files/<slug>/ (writes stay in memory), a fake httpGetJson,
// a log collector, and respond() returning a marker object. Capabilities follow
// the fixture's `capabilities`: anything not granted rejects (or throws, for
// logs) with an Error whose code is "capability_denied", as in the sandbox.

import { test, describe } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import crypto from "node:crypto";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..", "..");
const fixtures = path.join(root, "fixtures");

// ---------- fixtures ----------

function loadCatalog() {
  const dir = path.join(fixtures, "catalog");
  const bySlug = {};
  for (const name of fs.readdirSync(dir).filter((n) => n.endsWith(".json"))) {
    const entry = JSON.parse(fs.readFileSync(path.join(dir, name), "utf8"));
    bySlug[entry.slug] = entry;
  }
  return bySlug;
}

const catalog = loadCatalog();
const modules = {};

async function handler(slug) {
  if (!modules[slug]) {
    modules[slug] = await import(pathToFileURL(path.join(fixtures, "handlers", `${slug}.js`)).href);
  }
  return modules[slug];
}

// ---------- mock ctx ----------

function denied(what) {
  const err = new Error(`capability ${what} is not granted to this endpoint`);
  err.code = "capability_denied";
  return err;
}

function mockCtx(slug, options = {}) {
  const caps = catalog[slug].capabilities || {};
  const kvStore = options.kvStore || new Map();
  const fileDir = path.join(fixtures, "handler-files", slug);
  const written = new Map();
  const logs = [];
  const httpCalls = [];
  const guard = (cap, fn) => async (...args) => {
    if (!caps[cap]) throw denied(cap);
    return fn(...args);
  };
  const readFile = (p) => {
    if (written.has(p)) return written.get(p);
    const full = path.join(fileDir, p);
    if (!full.startsWith(fileDir + path.sep) || !fs.existsSync(full)) return null;
    return fs.readFileSync(full, "utf8");
  };
  const writer = (level) => (...args) => {
    if (!caps.logs) throw denied("logs");
    logs.push({ level, message: args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" ") });
  };
  const log = writer("info");
  log.info = writer("info");
  log.warn = writer("warn");
  log.error = writer("error");
  const ctx = {
    respond(status, body, headers) {
      assert.ok(Number.isInteger(status) && status >= 100 && status <= 599, "respond status");
      return { __respond: true, status, body, headers };
    },
    kv: {
      get: guard("kv", async (key) => (kvStore.has(key) ? structuredClone(kvStore.get(key)) : null)),
      set: guard("kv", async (key, value, opts) => {
        assert.equal(typeof key, "string");
        assert.ok(key.length > 0 && key.length <= 512, "kv key size");
        if (opts && opts.ttlSeconds !== undefined) assert.ok(Number.isInteger(opts.ttlSeconds) && opts.ttlSeconds > 0);
        kvStore.set(key, JSON.parse(JSON.stringify(value)));
      }),
      delete: guard("kv", async (key) => kvStore.delete(key)),
      list: guard("kv", async ({ prefix = "", limit = 1000, cursor = null } = {}) => {
        const keys = [...kvStore.keys()].filter((k) => k.startsWith(prefix) && (cursor === null || k > cursor)).sort();
        const page = keys.slice(0, limit);
        return {
          entries: page.map((key) => ({ key, value: structuredClone(kvStore.get(key)) })),
          cursor: keys.length > limit ? page[page.length - 1] : null,
        };
      }),
    },
    files: {
      read: guard("files", async (p) => readFile(p)),
      readJson: guard("files", async (p) => {
        const text = readFile(p);
        return text === null ? null : JSON.parse(text);
      }),
      write: guard("files", async (p, data) => {
        written.set(p, typeof data === "string" ? data : JSON.stringify(data));
      }),
      list: guard("files", async () => []),
      delete: guard("files", async (p) => written.delete(p)),
    },
    env: Object.freeze({}),
    httpGetJson: guard("httpGetJson", async (url, opts) => {
      httpCalls.push({ url, opts });
      if (!options.http || !(url in options.http)) {
        const err = new Error(`GET ${url}: 404`);
        err.code = "http_error";
        throw err;
      }
      return structuredClone(options.http[url]);
    }),
    log,
  };
  return { ctx: Object.freeze(ctx), logs, kvStore, httpCalls };
}

async function call(slug, input, options = {}) {
  const mod = await handler(slug);
  const mock = mockCtx(slug, options);
  const req = {
    input,
    method: "POST",
    query: {},
    headers: {},
    endpoint: { slug },
    requestId: "req-test-1",
    payment: null,
  };
  const result = await mod.default(req, mock.ctx);
  return { result, ...mock };
}

// Checks `required` keys and top-level `type`s of the fixture's outputSchema.
function assertOutputSchema(slug, result) {
  const schema = catalog[slug].outputSchema;
  assert.ok(result && typeof result === "object" && !result.__respond, `${slug}: a plain result`);
  for (const key of schema.required || []) {
    assert.ok(Object.prototype.hasOwnProperty.call(result, key), `${slug}: output lacks required "${key}"`);
  }
  const typeOk = {
    string: (v) => typeof v === "string",
    integer: (v) => Number.isInteger(v),
    number: (v) => typeof v === "number",
    boolean: (v) => typeof v === "boolean",
    array: (v) => Array.isArray(v),
    object: (v) => v !== null && typeof v === "object" && !Array.isArray(v),
  };
  for (const [key, prop] of Object.entries(schema.properties || {})) {
    if (key in result && prop.type) {
      assert.ok(typeOk[prop.type](result[key]), `${slug}: "${key}" should be ${prop.type}`);
    }
  }
  // The result must survive the sandbox's JSON serialization unchanged.
  assert.deepEqual(JSON.parse(JSON.stringify(result)), result);
}

function assertOneInfoLog(logs) {
  const infos = logs.filter((l) => l.level === "info");
  assert.equal(infos.length, 1, `one info log line, got ${JSON.stringify(logs)}`);
  assert.ok(infos[0].message.length < 300, "log line is concise");
}

const SLUGS = ["creator-plan", "text-summary", "business-lookup", "developer-utility"];

// ---------- all handlers ----------

describe("all handlers", () => {
  for (const slug of SLUGS) {
    test(`${slug}: exampleInput satisfies the outputSchema and logs one line`, async () => {
      const { result, logs } = await call(slug, catalog[slug].exampleInput);
      assertOutputSchema(slug, result);
      assertOneInfoLog(logs);
    });

    test(`${slug}: deterministic for the same input`, async () => {
      const a = await call(slug, catalog[slug].exampleInput);
      const b = await call(slug, catalog[slug].exampleInput);
      assert.deepEqual(a.result, b.result);
    });

    test(`${slug}: source uses only ECMAScript and ctx`, () => {
      const source = fs.readFileSync(path.join(fixtures, "handlers", `${slug}.js`), "utf8");
      const code = source.replace(/\/\/.*$/gm, "").replace(/\/\*[\s\S]*?\*\//g, "");
      assert.match(code, /export default async function/);
      for (const banned of [
        /\bfetch\s*\(/, /\brequire\s*\(/, /^\s*import\s/m, /\bimport\s*\(/, /\bprocess\./, /\bBuffer\b/,
        /\bTextEncoder\b/, /\bTextDecoder\b/, /\bsetTimeout\b/, /\bsetInterval\b/, /\bcrypto\./,
        /\bDeno\b/, /\bIntl\b/, /\blocaleCompare\b/, /\btoLocale\w*\(/, /\bstructuredClone\b/, /\batob\b/, /\bbtoa\b/,
      ]) {
        assert.doesNotMatch(code, banned, `${slug} must not use ${banned}`);
      }
    });
  }
});

test("every call logs exactly one line, refusals included", async () => {
  const calls = [
    ["creator-plan", { role: "x", goal: "y", constraints: ["no email", "no web", "no video", "no social", "no audio", "no community", "no partnerships", "no ads", "no events", "no live"] }],
    ["text-summary", { url: "https://example.com/missing" }],
    ["text-summary", { text: "..." }],
    ["business-lookup", { domain: "co.uk" }],
    ["business-lookup", { company: "Zzyzx" }],
    ["developer-utility", {}],
  ];
  for (const [slug, input] of calls) {
    const { logs } = await call(slug, input);
    assert.equal(logs.length, 1, `${slug} ${JSON.stringify(input)}: ${JSON.stringify(logs)}`);
  }
});

// ---------- creator-plan ----------

describe("creator-plan", () => {
  const base = { role: "indie game developer", goal: "grow a newsletter to 1,000 readers" };
  const formats = JSON.parse(
    fs.readFileSync(path.join(fixtures, "handler-files", "creator-plan", "formats.json"), "utf8"),
  ).formats;
  const byId = Object.fromEntries(formats.map((f) => [f.id, f]));
  const sum = (plan) => plan.reduce((s, p) => s + p.hoursPerWeek, 0);

  test("catalogue has about 20 well-formed formats", () => {
    assert.ok(formats.length >= 18 && formats.length <= 25);
    for (const f of formats) {
      for (const key of ["id", "name", "channel", "keywords", "hoursPerUnit", "minHoursPerWeek", "metric", "needs", "actions"]) {
        assert.ok(key in f, `${f.id} has ${key}`);
      }
      assert.ok(f.actions.length >= 2);
    }
  });

  test("goal drives the ranking: a newsletter goal anchors on the newsletter", async () => {
    const { result } = await call("creator-plan", { ...base, timeBudget: "5 hours a week" });
    assert.equal(result.plan[0].format, "newsletter");
    assert.deepEqual(result.plan.map((p) => p.step), result.plan.map((_, i) => i + 1));
    assert.match(result.creatorCatalogUsed, /toolhost-creator-formats v1\.0\.0/);
    for (const p of result.plan) {
      for (const key of ["step", "title", "format", "hoursPerWeek", "cadence", "actions", "metric"]) assert.ok(key in p);
    }
  });

  test("a different role and goal gives a different plan", async () => {
    const { result } = await call("creator-plan", {
      role: "freelance brand designer",
      goal: "win more client leads through case studies and a portfolio",
      timeBudget: "4 hours a week",
    });
    assert.equal(result.plan[0].format, "case-studies");
  });

  test("hours always sum exactly to the parsed budget", async () => {
    const cases = [
      ["5 hours a week", 5],
      ["2h/day", 14],
      ["10 hrs per month", 2.25], // 10 * 12 / 52 = 2.307 -> nearest quarter hour
      ["90 minutes daily", 10.5],
      ["3-5 hours weekly", 4],
      ["half an hour a day", 3.5],
      ["1 hour per weekday", 5],
      ["7", 7],
      ["1.3 hours", 1.25],
      ["an hour a week", 1],
    ];
    for (const [timeBudget, expected] of cases) {
      const { result } = await call("creator-plan", { ...base, timeBudget });
      assert.equal(result.budget.hoursPerWeek, expected, timeBudget);
      assert.equal(sum(result.plan), expected, `sum for ${timeBudget}`);
      for (const p of result.plan) {
        assert.ok(p.hoursPerWeek > 0 && Number.isInteger(p.hoursPerWeek * 4), `quarter hours for ${timeBudget}`);
      }
    }
  });

  test("missing, unreadable or absurd budgets fall back sensibly", async () => {
    let { result } = await call("creator-plan", base);
    assert.equal(result.budget.hoursPerWeek, 5);
    assert.equal(result.budget.assumed, true);
    assert.equal(sum(result.plan), 5);
    ({ result } = await call("creator-plan", { ...base, timeBudget: "whenever I can" }));
    assert.equal(result.budget.hoursPerWeek, 5);
    assert.equal(result.budget.assumed, true);
    ({ result } = await call("creator-plan", { ...base, timeBudget: "1000 hours a day" }));
    assert.equal(result.budget.hoursPerWeek, 80);
    assert.equal(sum(result.plan), 80);
    ({ result } = await call("creator-plan", { ...base, timeBudget: "5 minutes a week" }));
    assert.equal(result.budget.hoursPerWeek, 0.25);
    assert.equal(result.plan.length, 1);
    assert.equal(sum(result.plan), 0.25);
  });

  test("constraints exclude matching formats", async () => {
    const check = async (constraints, forbidden) => {
      const { result } = await call("creator-plan", {
        role: "startup founder",
        goal: "launch a product with video, ads, podcast and social media reach",
        timeBudget: "10 hours a week",
        constraints,
      });
      assert.ok(result.plan.length > 0);
      for (const p of result.plan) assert.ok(!forbidden(byId[p.format]), `${p.format} violates ${constraints}`);
      assert.equal(sum(result.plan), 10);
      return result;
    };
    const r = await check(["no paid ads"], (f) => f.needs.paidAds);
    assert.deepEqual(r.constraints.applied[0].excludes.sort(), ["paid-social-ads", "sponsorships"]);
    await check(["no video"], (f) => f.needs.video);
    await check(["No social media"], (f) => f.needs.social || f.channel === "social");
    await check(["without podcasts", "I don't do live streams"], (f) => f.needs.audio || f.needs.live);
    const all = await check(["no paid ads", "no video", "no social media", "weekends only"],
      (f) => f.needs.paidAds || f.needs.video || f.needs.social);
    assert.deepEqual(all.constraints.notes, ["weekends only"]);
  });

  test("tone shapes the wording", async () => {
    const input = { ...base, timeBudget: "5 hours a week", audience: "players of cozy games" };
    const warm = (await call("creator-plan", { ...input, tone: "warm" })).result;
    const direct = (await call("creator-plan", { ...input, tone: "direct" })).result;
    const pro = (await call("creator-plan", { ...input, tone: "professional" })).result;
    assert.equal(warm.tone, "warm");
    assert.equal(direct.tone, "direct");
    assert.notEqual(warm.summary, direct.summary);
    assert.match(warm.summary, /friendly/);
    assert.match(direct.summary, /^5 h\/week/);
    assert.match(pro.summary, /^Recommended plan/);
    assert.ok(pro.plan[0].actions.every((a) => a.endsWith(".")));
    assert.match(warm.plan[0].actions.join(" "), /players of cozy games/);
  });

  test("everything excluded gives an empty plan with an explanation", async () => {
    const { result } = await call("creator-plan", {
      ...base,
      constraints: ["no email", "no web", "no video", "no social", "no audio", "no community", "no partnerships",
        "no ads", "no events", "no live"],
    });
    assert.deepEqual(result.plan, []);
    assert.match(result.summary, /No format/);
    assertOutputSchema("creator-plan", result);
  });

  test("odd-but-valid input: whitespace strings and many constraints", async () => {
    const { result } = await call("creator-plan", {
      role: " ", goal: "   ", timeBudget: "", audience: "", tone: "",
      constraints: Array.from({ length: 20 }, (_, i) => `constraint ${i}`),
    });
    assertOutputSchema("creator-plan", result);
    assert.equal(sum(result.plan), 5);
  });
});

// ---------- text-summary ----------

describe("text-summary", () => {
  const SOLAR = [
    "Solar panels convert sunlight into electricity for homes.",
    "My neighbour bought a red bicycle last week.",
    "Modern solar panels turn more sunlight into electricity than older panels did.",
    "The weather was pleasant on Tuesday.",
    "Cheap solar electricity from rooftop panels lowers household energy bills.",
    "Cats sleep for most of the day.",
  ].join(" ");

  test("picks the most representative sentences, in original order", async () => {
    const { result } = await call("text-summary", { text: SOLAR, sentences: 3 });
    assert.equal(result.stats.sentences, 6);
    assert.deepEqual(result.sentences.map((s) => s.index), [0, 2, 4]);
    assert.equal(
      result.summary,
      "Solar panels convert sunlight into electricity for homes. Modern solar panels turn more sunlight into electricity than older panels did. Cheap solar electricity from rooftop panels lowers household energy bills.",
    );
    assert.deepEqual(result.keyTerms.slice(0, 3), [
      { term: "panels", count: 4 },
      { term: "solar", count: 3 },
      { term: "electricity", count: 3 },
    ]);
    assert.ok(result.keyTerms.length <= 8);
    assert.ok(!result.keyTerms.some((k) => ["the", "for", "than", "into"].includes(k.term)));
  });

  test("default count is 3, fewer for short texts", async () => {
    const long = (await call("text-summary", { text: SOLAR + " " + SOLAR })).result;
    assert.equal(long.stats.summarySentences, 3);
    const short = (await call("text-summary", { text: "One sentence here. And a second one." })).result;
    assert.equal(short.stats.summarySentences, 1);
    const single = (await call("text-summary", { text: "no punctuation at all" })).result;
    assert.equal(single.summary, "no punctuation at all");
    const many = (await call("text-summary", { text: "Short. Text.", sentences: 20 })).result;
    assert.equal(many.stats.summarySentences, 2);
  });

  test("sentence splitting handles abbreviations, initials and decimals", async () => {
    const text = "Dr. Smith measured 3.14 units, e.g. in the lab. He wrote to the U.S. Senate. " +
      "Prices rose 2.5% in Jan. last year. J. R. Tolkien wrote books! Was it good? They moved to the U.S. It was cold.";
    const { result } = await call("text-summary", { text, sentences: 20 });
    assert.deepEqual(result.sentences.map((s) => s.text), [
      "Dr. Smith measured 3.14 units, e.g. in the lab.",
      "He wrote to the U.S. Senate.",
      "Prices rose 2.5% in Jan. last year.",
      "J. R. Tolkien wrote books!",
      "Was it good?",
      "They moved to the U.S.",
      "It was cold.",
    ]);
  });

  test("paragraph breaks end sentences", async () => {
    const { result } = await call("text-summary", { text: "A heading without a stop\n\nThe body starts here. It goes on.", sentences: 5 });
    assert.equal(result.stats.sentences, 3);
    assert.equal(result.sentences[0].text, "A heading without a stop");
  });

  test("stats: characters, words, reading time, compression", async () => {
    const text = "word ".repeat(400).trim() + ".";
    const { result } = await call("text-summary", { text });
    assert.equal(result.stats.words, 400);
    assert.equal(result.stats.characters, text.length);
    assert.equal(result.stats.readingTimeSeconds, 120);
    assert.equal(result.stats.summarySentences, 1);
    assert.ok(result.summary.length <= 1001 && result.summary.endsWith("…"), "long sentences are shortened");
    assert.equal(result.stats.compressionRatio, Math.round((result.stats.summaryCharacters / text.length) * 1000) / 1000);
    const blank = (await call("text-summary", { text: "- \n\n- \n\n..." })).result;
    assert.equal(blank.status, 422);
    assert.equal(blank.body.error.code, "no_text");
    const emoji = (await call("text-summary", { text: "Café 🎉 party. Fun times." })).result;
    assert.equal(emoji.stats.characters, 24); // code points, not UTF-16 units
    const solar = (await call("text-summary", { text: SOLAR })).result;
    assert.equal(solar.stats.compressionRatio, Math.round((solar.summary.length / SOLAR.length) * 1000) / 1000);
  });

  test("url: fetches with httpGetJson and summarizes the text field", async () => {
    const url = "https://example.com/article.json";
    const { result, httpCalls } = await call("text-summary", { url, sentences: 3 }, {
      http: { [url]: { title: "Solar", meta: { author: "x" }, body: SOLAR } },
    });
    assert.equal(httpCalls.length, 1);
    assert.equal(httpCalls[0].url, url);
    assert.equal(result.source, "url");
    assert.deepEqual(result.sentences.map((s) => s.index), [0, 2, 4]);
  });

  test("url: nested description is found; a document without text is a 422", async () => {
    const url = "https://example.com/doc";
    const nested = (await call("text-summary", { url }, { http: { [url]: { data: { description: "Nested text. Still text." } } } })).result;
    assert.equal(nested.stats.sentences, 2);
    const { result } = await call("text-summary", { url }, { http: { [url]: { title: 7, items: [1, 2] } } });
    assert.equal(result.__respond, true);
    assert.equal(result.status, 422);
    assert.equal(result.body.ok, false);
    assert.equal(result.body.error.code, "no_text");
  });

  test("url: a failed fetch is a 502", async () => {
    const { result } = await call("text-summary", { url: "https://example.com/missing" });
    assert.equal(result.status, 502);
    assert.equal(result.body.error.code, "fetch_failed");
  });

  test("text wins over url and no fetch happens", async () => {
    const { result, httpCalls } = await call("text-summary", { text: SOLAR, url: "https://example.com/x" });
    assert.equal(result.source, "text");
    assert.equal(httpCalls.length, 0);
  });

  test("a 200,000-character text stays fast", async () => {
    const text = (SOLAR + "\n\n").repeat(Math.ceil(200000 / (SOLAR.length + 2))).slice(0, 200000);
    const started = Date.now();
    const { result } = await call("text-summary", { text });
    assert.ok(Date.now() - started < 1500, "bounded work");
    assert.equal(result.stats.summarySentences, 3);
    assertOutputSchema("text-summary", result);
  });
});

// ---------- business-lookup ----------

describe("business-lookup", () => {
  const directory = JSON.parse(
    fs.readFileSync(path.join(fixtures, "handler-files", "business-lookup", "directory.json"), "utf8"),
  );

  test("directory has ~40 companies with the documented fields", () => {
    assert.ok(directory.companies.length >= 35);
    const ids = new Set();
    for (const c of directory.companies) {
      for (const key of ["id", "name", "aliases", "domains", "industry", "hqCountry", "founded", "ticker"]) assert.ok(key in c, `${c.id}.${key}`);
      assert.match(c.hqCountry, /^[A-Z]{2}$/);
      assert.ok(Number.isInteger(c.founded) && c.founded > 1600 && c.founded < 2026);
      assert.ok(!ids.has(c.id));
      ids.add(c.id);
    }
  });

  test('finds "coinbase inc." with legal suffix and punctuation stripped', async () => {
    const { result } = await call("business-lookup", { company: "coinbase inc." });
    assert.equal(result.matches[0].id, "coinbase");
    assert.equal(result.matches[0].score, 1);
    assert.equal(result.matches[0].ticker, "NASDAQ:COIN");
    assert.equal(result.query.normalizedCompany, "coinbase");
    assert.equal(result.domain.registrable, "coinbase.com");
    assert.equal(result.domain.input, null);
  });

  test('finds "www.coinbase.com" by registrable domain', async () => {
    const { result } = await call("business-lookup", { domain: "www.coinbase.com" });
    assert.equal(result.matches[0].id, "coinbase");
    assert.equal(result.matches[0].matchedBy, "domain");
    assert.equal(result.domain.registrable, "coinbase.com");
    assert.equal(result.domain.tld, "com");
    assert.equal(result.domain.likelyCountry, null);
    assert.deepEqual(result.domain.discoveryUrls, [
      "https://coinbase.com/.well-known/x402",
      "https://coinbase.com/ai/manifest",
      "https://coinbase.com/.well-known/mcp/server.json",
    ]);
  });

  test("domain parsing: URLs, e-mail, multi-level public suffixes, ccTLDs", async () => {
    const cases = [
      ["https://news.bbc.co.uk/path?q=1", "bbc.co.uk", "uk", "GB", "bbc"],
      ["shop@commbank.com.au", "commbank.com.au", "au", "AU", "commonwealth-bank"],
      ["WWW.Petrobras.com.br:443", "petrobras.com.br", "br", "BR", "petrobras"],
      ["global.toyota.co.jp", "toyota.co.jp", "jp", "JP", "toyota"],
      ["api.example.io", "example.io", "io", null, null],
      ["sub.example.de.", "example.de", "de", "DE", null],
    ];
    for (const [domain, registrable, tld, country, id] of cases) {
      const { result } = await call("business-lookup", { domain });
      assert.equal(result.domain.registrable, registrable, domain);
      assert.equal(result.domain.tld, tld, domain);
      assert.equal(result.domain.likelyCountry, country, domain);
      assert.equal(result.matches[0] ? result.matches[0].id : null, id, domain);
    }
  });

  test("invalid domains: 422 alone, noted when a company is also given", async () => {
    for (const domain of ["co.uk", "localhost", "10.0.0.1", "bad_label.com"]) {
      const { result } = await call("business-lookup", { domain });
      assert.equal(result.status, 422, domain);
      assert.equal(result.body.error.code, "invalid_domain");
    }
    const { result } = await call("business-lookup", { company: "Stripe", domain: "co.uk" });
    assert.equal(result.matches[0].id, "stripe");
    assert.equal(result.domain.valid, false);
  });

  test("fuzzy matching ranks the closest company first", async () => {
    const cases = [
      ["Coinbsae", "coinbase"],
      ["Microsft Corp", "microsoft"],
      ["micro soft", "microsoft"],
      ["Tesla Motor", "tesla"],
      ["Nestle SA", "nestle"],
      ["NOVO NORDISK A/S", "novo-nordisk"],
      ["Robert Bosch GmbH", "bosch"],
      ["Petróleo Brasileiro", "petrobras"],
      ["facebook", "meta"],
    ];
    for (const [company, id] of cases) {
      const { result } = await call("business-lookup", { company });
      assert.equal(result.matches[0] && result.matches[0].id, id, company);
      for (let i = 1; i < result.matches.length; i++) {
        assert.ok(result.matches[i - 1].score >= result.matches[i].score, "sorted by score");
      }
    }
    const { result } = await call("business-lookup", { company: "Coinbsae" });
    assert.ok(result.matches[0].score < 1 && result.matches[0].score >= 0.85);
    const none = (await call("business-lookup", { company: "Zzyzx Widgets LLC" })).result;
    assert.deepEqual(none.matches, []);
    assert.equal(none.domain, null);
    assertOutputSchema("business-lookup", none);
  });

  test("company and domain agreeing give one match by name and domain", async () => {
    const { result } = await call("business-lookup", catalog["business-lookup"].exampleInput);
    assert.equal(result.matches[0].id, "coinbase");
    assert.equal(result.matches[0].matchedBy, "name+domain");
    assert.equal(result.domain.input, "coinbase.com");
  });

  test("popularity counts lookups in kv across calls", async () => {
    const kvStore = new Map();
    const first = (await call("business-lookup", { company: "Coinbase" }, { kvStore })).result;
    assert.deepEqual(first.popularity.counted, { id: "coinbase", name: "Coinbase Global, Inc.", lookups: 1 });
    const second = (await call("business-lookup", { domain: "www.coinbase.com" }, { kvStore })).result;
    assert.equal(second.popularity.counted.lookups, 2);
    await call("business-lookup", { company: "Stripe" }, { kvStore });
    const fourth = (await call("business-lookup", { company: "stripe inc" }, { kvStore })).result;
    assert.equal(kvStore.get("lookups:coinbase"), 2);
    assert.equal(kvStore.get("lookups:stripe"), 2);
    assert.deepEqual(fourth.popularity.top.map((t) => [t.id, t.lookups]), [["coinbase", 2], ["stripe", 2]]);
    // A weak fuzzy match is not counted.
    const weak = (await call("business-lookup", { company: "Amazon Web" }, { kvStore })).result;
    assert.equal(weak.popularity.counted, null);
  });
});

// ---------- developer-utility ----------

describe("developer-utility", () => {
  const nodeSha = (text) => crypto.createHash("sha256").update(Buffer.from(text, "utf8")).digest("hex");

  test("sha256Hex matches node:crypto on several inputs", async () => {
    const { sha256Hex, utf8Encode, utf8Length, utf8ByteString } = await handler("developer-utility");
    const inputs = [
      "", "abc", "a".repeat(55), "a".repeat(56), "a".repeat(63), "a".repeat(64), "a".repeat(65),
      "The quick brown fox jumps over the lazy dog", "é", "日本語のテキスト", "emoji 🎉🚀 and ZWJ 👩‍💻",
      "x".repeat(1000) + "ü".repeat(1000), "\u0000\u007f\u0080\u07ff\u0800\uffff", "lone \ud800 surrogate \udc00",
    ];
    for (const text of inputs) {
      const bytes = utf8Encode(text);
      assert.equal(bytes.length, Buffer.byteLength(text, "utf8"), `length of ${JSON.stringify(text).slice(0, 30)}`);
      assert.equal(utf8Length(text), Buffer.byteLength(text, "utf8"));
      assert.deepEqual(Buffer.from(bytes), Buffer.from(text, "utf8"));
      assert.equal(sha256Hex(bytes), nodeSha(text), `sha of ${JSON.stringify(text).slice(0, 30)}`);
      // The byte-string path (used by the handler) gives the same bytes and hash.
      const byteString = utf8ByteString(text);
      assert.deepEqual(Buffer.from(byteString, "latin1"), Buffer.from(text, "utf8"));
      assert.equal(sha256Hex(byteString), nodeSha(text));
    }
    assert.equal(sha256Hex(utf8Encode("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const random = crypto.createHash("sha512").update("seed").digest();
    const big = new Uint8Array(100000).map((_, i) => random[i % random.length] ^ (i & 0xff));
    assert.equal(sha256Hex(big), crypto.createHash("sha256").update(big).digest("hex"));
  });

  test("example input: bytes, depth, paths, counts, canonical, sha256", async () => {
    const input = { order: { id: 7, items: ["a", "b"] } };
    const { result } = await call("developer-utility", input);
    assert.equal(result.bytes, Buffer.byteLength(JSON.stringify(input)));
    assert.equal(result.depth, 3);
    assert.deepEqual(result.paths, [
      { pointer: "", type: "object" },
      { pointer: "/order", type: "object" },
      { pointer: "/order/id", type: "integer" },
      { pointer: "/order/items", type: "array" },
      { pointer: "/order/items/0", type: "string" },
      { pointer: "/order/items/1", type: "string" },
    ]);
    assert.equal(result.truncated, false);
    assert.deepEqual(result.counts, { object: 2, array: 1, string: 2, integer: 1, number: 0, boolean: 0, null: 0 });
    assert.deepEqual(result.strings, { count: 2, longestLength: 1, totalLength: 2 });
    assert.equal(result.canonical, '{"order":{"id":7,"items":["a","b"]}}');
    assert.equal(result.sha256, nodeSha(result.canonical));
  });

  test("canonical form sorts keys at every level; non-ASCII bytes and hash match node", async () => {
    const input = { z: 1, "é": "日本🎉", a: { y: [3, { b: true, a: null }], "a/b~c": -0.5 }, "": "empty key" };
    const { result } = await call("developer-utility", input);
    assert.equal(result.canonical, '{"":"empty key","a":{"a/b~c":-0.5,"y":[3,{"a":null,"b":true}]},"z":1,"é":"日本🎉"}');
    assert.equal(result.bytes, Buffer.byteLength(JSON.stringify(input), "utf8"));
    assert.equal(result.canonicalBytes, Buffer.byteLength(result.canonical, "utf8"));
    assert.equal(result.sha256, nodeSha(result.canonical));
    assert.ok(result.paths.some((p) => p.pointer === "/a/a~1b~0c" && p.type === "number"));
    assert.ok(result.paths.some((p) => p.pointer === "/" && p.type === "string"));
    assert.equal(result.strings.longestLength, 9);
    // Key order of the input does not change the hash.
    const reordered = (await call("developer-utility", { "": "empty key", "é": "日本🎉", z: 1, a: { "a/b~c": -0.5, y: [3, { a: null, b: true }] } })).result;
    assert.equal(reordered.sha256, result.sha256);
  });

  test("depth conventions", async () => {
    const { canonicalJson } = await handler("developer-utility");
    assert.equal((await call("developer-utility", {})).result.depth, 1);
    assert.equal((await call("developer-utility", { a: 1 })).result.depth, 1);
    assert.equal((await call("developer-utility", { a: [] })).result.depth, 2);
    let deep = {};
    const top = deep;
    for (let i = 0; i < 120; i++) deep = deep.n = {};
    const { result } = await call("developer-utility", top);
    assert.equal(result.depth, 121);
    assert.equal(result.canonical, canonicalJson(top));
    assert.equal(result.canonical, JSON.stringify(top));
  });

  test("paths are capped at 200 with truncated: true; counts stay complete", async () => {
    const input = {};
    for (let i = 0; i < 500; i++) input[`k${String(i).padStart(3, "0")}`] = i % 2 ? `v${i}` : i;
    const { result } = await call("developer-utility", input);
    assert.equal(result.paths.length, 200);
    assert.equal(result.truncated, true);
    assert.equal(result.counts.integer, 250);
    assert.equal(result.counts.string, 250);
    assert.equal(result.sha256, nodeSha(result.canonical));
  });

  test("a large payload is handled and the canonical text is omitted above 256 KiB", async () => {
    const input = { items: Array.from({ length: 20000 }, (_, i) => ({ id: i, name: `item-${i}`, ok: i % 3 === 0 })) };
    const started = Date.now();
    const { result } = await call("developer-utility", input);
    assert.ok(Date.now() - started < 2000);
    assert.equal(result.canonical, null);
    assert.equal(result.canonicalOmitted, true);
    const { canonicalJson } = await handler("developer-utility");
    assert.equal(result.sha256, nodeSha(canonicalJson(input)));
    assert.equal(result.bytes, Buffer.byteLength(JSON.stringify(input)));
  });
});
