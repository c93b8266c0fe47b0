// Engine-neutral test driver: runs handler cases with a minimal mock ctx using
// only ECMAScript, so the same code runs under Node and under QuickJS (see
// qjs-entry.mjs and ../quickjs.test.mjs). `loadText(path)` returns a file's
// text or null; `importHandler(slug)` resolves to the handler module.

function makeCtx(caseDef, loadText, root, kvStore) {
  const logs = [];
  const denied = (what) => {
    const err = new Error(`capability ${what} denied`);
    err.code = "capability_denied";
    return err;
  };
  const caps = caseDef.capabilities || {};
  const guard = (cap, fn) => async (...args) => {
    if (!caps[cap]) throw denied(cap);
    return fn(...args);
  };
  const clone = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));
  const read = (p) => loadText(`${root}/fixtures/handler-files/${caseDef.slug}/${p}`);
  const writer = (level) => (...args) => {
    if (!caps.logs) throw denied("logs");
    logs.push(level + ": " + args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" "));
  };
  const log = writer("info");
  log.info = writer("info");
  log.warn = writer("warn");
  log.error = writer("error");
  const ctx = Object.freeze({
    respond: (status, body, headers) => ({ __respond: true, status, body, headers: headers || null }),
    kv: Object.freeze({
      get: guard("kv", async (k) => (kvStore.has(k) ? clone(kvStore.get(k)) : null)),
      set: guard("kv", async (k, v) => { kvStore.set(k, clone(v)); }),
      delete: guard("kv", async (k) => kvStore.delete(k)),
      list: guard("kv", async ({ prefix = "", limit = 1000 } = {}) => {
        const keys = [...kvStore.keys()].filter((k) => k.startsWith(prefix)).sort().slice(0, limit);
        return { entries: keys.map((key) => ({ key, value: clone(kvStore.get(key)) })), cursor: null };
      }),
    }),
    files: Object.freeze({
      read: guard("files", async (p) => read(p)),
      readJson: guard("files", async (p) => {
        const t = read(p);
        return t === null ? null : JSON.parse(t);
      }),
      write: guard("files", async () => {}),
      list: guard("files", async () => []),
      delete: guard("files", async () => false),
    }),
    env: Object.freeze({}),
    httpGetJson: guard("httpGetJson", async (url) => {
      const http = caseDef.http || {};
      if (!Object.prototype.hasOwnProperty.call(http, url)) {
        const err = new Error(`GET ${url}: 404`);
        err.code = "http_error";
        throw err;
      }
      return clone(http[url]);
    }),
    log,
  });
  return { ctx, logs };
}

// Runs the cases in order (cases with the same kvGroup share a kv store) and
// returns [{ name, result, logs, error, ms }].
export async function runCases(cases, { loadText, importHandler, root, now }) {
  const kvGroups = new Map();
  const out = [];
  for (const caseDef of cases) {
    const group = caseDef.kvGroup || caseDef.name;
    if (!kvGroups.has(group)) kvGroups.set(group, new Map());
    const { ctx, logs } = makeCtx(caseDef, loadText, root, kvGroups.get(group));
    const mod = await importHandler(caseDef.slug);
    const req = { input: caseDef.input, method: "POST", query: {}, headers: {}, endpoint: { slug: caseDef.slug }, requestId: "r1", payment: null };
    const started = now();
    let result = null;
    let error = null;
    try {
      result = JSON.parse(JSON.stringify(await mod.default(req, ctx)));
    } catch (err) {
      error = { message: String(err && err.message), code: (err && err.code) || "" };
    }
    out.push({ name: caseDef.name, result, logs, error, ms: now() - started });
  }
  return out;
}
