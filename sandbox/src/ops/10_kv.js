// toolhost runtime glue: ctx.kv. Paired with sandbox/src/ops/kv.rs, which
// checks the `kv` capability, the key and value sizes and the atomic limits.
//
// ctx.kv.atomic() is a plain builder: it collects checks and mutations as
// JSON text (each value serialized when it is added, so a later change to the
// object does not leak into the commit) and commit() makes one op call.

"use strict";

((globalThis) => {
  const { core, primordials, toolhost } = globalThis.__bootstrap;
  const {
    op_kv_commit,
    op_kv_delete,
    op_kv_get,
    op_kv_get_entry,
    op_kv_list,
    op_kv_set,
  } = core.ops;
  const { toJsonText } = toolhost;
  const {
    ArrayPrototypeJoin,
    ArrayPrototypeMap,
    ArrayPrototypePush,
    JSONParse,
    JSONStringify,
    NumberIsInteger,
    NumberIsSafeInteger,
    ObjectFreeze,
    String,
    TypeError,
  } = primordials;

  function keyArg(key, what = "ctx.kv") {
    if (typeof key !== "string") {
      throw new TypeError(`${what}: key must be a string`);
    }
    return key;
  }

  function ttlArg(options, what) {
    const ttl = options?.ttlSeconds;
    if (ttl !== undefined && (!NumberIsInteger(ttl) || ttl < 1)) {
      throw new TypeError(`${what}: ttlSeconds must be a positive integer`);
    }
    return ttl;
  }

  // A new atomic operation: .check/.set/.delete/.sum chain, .commit() sends it.
  function createAtomic() {
    const checks = [];
    const mutations = [];
    const atomic = ObjectFreeze({
      // check(key, versionstamp) or check({ key, versionstamp }) (a getEntry
      // result): the key must still have that versionstamp (null: absent).
      check(keyOrEntry, versionstamp) {
        let key = keyOrEntry;
        let stamp = versionstamp;
        if (keyOrEntry !== null && typeof keyOrEntry === "object") {
          key = keyOrEntry.key;
          stamp = keyOrEntry.versionstamp;
        }
        keyArg(key, "ctx.kv.atomic().check");
        if (stamp !== null && typeof stamp !== "string") {
          throw new TypeError(
            "ctx.kv.atomic().check: versionstamp must be a string or null",
          );
        }
        ArrayPrototypePush(
          checks,
          `{"key":${JSONStringify(key)},"versionstamp":${JSONStringify(stamp)}}`,
        );
        return atomic;
      },
      set(key, value, options) {
        keyArg(key, "ctx.kv.atomic().set");
        const ttl = ttlArg(options, "ctx.kv.atomic().set");
        const text = toJsonText(value, "ctx.kv.atomic().set value");
        const expiry = ttl === undefined ? "" : `,"ttlSeconds":${ttl}`;
        ArrayPrototypePush(
          mutations,
          `{"type":"set","key":${JSONStringify(key)},"value":${text}${expiry}}`,
        );
        return atomic;
      },
      delete(key) {
        keyArg(key, "ctx.kv.atomic().delete");
        ArrayPrototypePush(mutations, `{"type":"delete","key":${JSONStringify(key)}}`);
        return atomic;
      },
      // Adds n to an integer counter (0 when absent); both within +/-(2^53 - 1).
      sum(key, n) {
        keyArg(key, "ctx.kv.atomic().sum");
        if (!NumberIsSafeInteger(n)) {
          throw new TypeError(
            "ctx.kv.atomic().sum: n must be an integer within +/-(2^53 - 1)",
          );
        }
        ArrayPrototypePush(mutations, `{"type":"sum","key":${JSONStringify(key)},"n":${n}}`);
        return atomic;
      },
      // { ok: true, versionstamp } when committed, { ok: false } when a check failed.
      async commit() {
        const text = `{"checks":[${ArrayPrototypeJoin(checks, ",")}],"mutations":[${
          ArrayPrototypeJoin(mutations, ",")
        }]}`;
        const versionstamp = await op_kv_commit(text);
        return versionstamp === null ? { ok: false } : { ok: true, versionstamp };
      },
    });
    return atomic;
  }

  function createKv() {
    return ObjectFreeze({
      // The stored value, or null when the key is absent. Values arrive as the JSON text
      // they were stored as, parsed here.
      async get(key) {
        const text = await op_kv_get(keyArg(key));
        return text === null ? null : JSONParse(text);
      },
      // { key, value, versionstamp }; value and versionstamp null when absent.
      async getEntry(key) {
        const entry = await op_kv_get_entry(keyArg(key));
        return entry === null
          ? { key, value: null, versionstamp: null }
          : { key, value: JSONParse(entry.value), versionstamp: entry.versionstamp };
      },
      // Stores a JSON value; { ttlSeconds } makes it expire.
      async set(key, value, options) {
        const ttl = ttlArg(options, "ctx.kv.set");
        await op_kv_set(keyArg(key), toJsonText(value, "ctx.kv.set value"), ttl ?? null);
      },
      // true when the key existed.
      async delete(key) {
        return await op_kv_delete(keyArg(key));
      },
      // { entries: [{ key, value }], cursor } with cursor null on the last page.
      async list(options) {
        const prefix = options?.prefix ?? "";
        const limit = options?.limit;
        const cursor = options?.cursor ?? null;
        if (typeof prefix !== "string") {
          throw new TypeError("ctx.kv.list: prefix must be a string");
        }
        if (limit !== undefined && (!NumberIsInteger(limit) || limit < 1)) {
          throw new TypeError("ctx.kv.list: limit must be a positive integer");
        }
        const page = await op_kv_list(prefix, limit ?? null, cursor === null ? null : String(cursor));
        return {
          entries: ArrayPrototypeMap(page.entries, (e) => ({ key: e.key, value: JSONParse(e.value) })),
          cursor: page.cursor,
        };
      },
      atomic: createAtomic,
    });
  }

  toolhost.createKv = createKv;
})(globalThis);
