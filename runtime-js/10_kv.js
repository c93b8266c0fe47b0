// toolhost runtime glue: ctx.kv. Paired with sandbox/src/ops/kv.rs, which
// checks the `kv` capability and the key and value sizes.

"use strict";

((globalThis) => {
  const { core, primordials, toolhost } = globalThis.__bootstrap;
  const { op_kv_delete, op_kv_get, op_kv_list, op_kv_set } = core.ops;
  const { toJsonText } = toolhost;
  const { NumberIsInteger, ObjectFreeze, String, TypeError } = primordials;

  function keyArg(key) {
    if (typeof key !== "string") {
      throw new TypeError("ctx.kv: key must be a string");
    }
    return key;
  }

  function createKv() {
    return ObjectFreeze({
      // The stored value, or null when the key is absent.
      async get(key) {
        return await op_kv_get(keyArg(key));
      },
      // Stores a JSON value; { ttlSeconds } makes it expire.
      async set(key, value, options) {
        const ttl = options?.ttlSeconds;
        if (ttl !== undefined && (!NumberIsInteger(ttl) || ttl < 1)) {
          throw new TypeError("ctx.kv.set: ttlSeconds must be a positive integer");
        }
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
        return await op_kv_list(prefix, limit ?? null, cursor === null ? null : String(cursor));
      },
    });
  }

  toolhost.createKv = createKv;
})(globalThis);
