// The surface a handler really gets, read from inside a real isolate by
// sandbox/tests/surface.rs and compared with web/toolhost.d.ts by
// tests/types/types.test.mjs (through the checked-in surface.json): every
// global, the members of each class and object, and req and ctx.
export default async function (req, ctx) {
  // Members inherited from Object.prototype (instances) and Function.prototype (classes) are
  // listed once, below, not for each global.
  const stopAt = new Set([Object.prototype, Function.prototype, null]);
  const ownOfFunctions = new Set(["length", "name", "prototype", "caller", "arguments"]);
  const wellKnown = new Map(
    Object.getOwnPropertyNames(Symbol)
      .filter((key) => typeof Symbol[key] === "symbol")
      .map((key) => [Symbol[key], `[Symbol.${key}]`]),
  );
  // String-named and well-known-symbol-named properties along the prototype chain, up to
  // Object.prototype or Function.prototype.
  const chain = (value, skip = new Set(["constructor"])) => {
    const names = new Set();
    for (let o = value; o !== null && o !== undefined && !stopAt.has(o); o = Object.getPrototypeOf(o)) {
      for (const name of Object.getOwnPropertyNames(o)) {
        if (!skip.has(name)) names.add(name);
      }
      for (const symbol of Object.getOwnPropertySymbols(o)) {
        if (wellKnown.has(symbol)) names.add(wellKnown.get(symbol));
      }
    }
    return [...names].sort();
  };
  const own = (o) => {
    const names = Object.getOwnPropertyNames(o);
    for (const symbol of Object.getOwnPropertySymbols(o)) {
      if (wellKnown.has(symbol)) names.push(wellKnown.get(symbol));
    }
    return names.filter((n) => n !== "constructor").sort();
  };
  const globals = {};
  for (const name of Object.getOwnPropertyNames(globalThis).sort()) {
    const value = globalThis[name];
    const entry = { type: typeof value };
    if (typeof value === "function") {
      entry.static = chain(value, ownOfFunctions);
      if (value.prototype !== undefined) entry.instance = chain(value.prototype);
    } else if (value !== null && typeof value === "object" && name !== "globalThis") {
      entry.members = chain(value);
    }
    globals[name] = entry;
  }
  const atomic = ctx.kv.atomic();
  return {
    objectPrototype: own(Object.prototype),
    functionPrototype: own(Function.prototype),
    globals,
    req: Object.keys(req).sort(),
    ctx: {
      ctx: chain(ctx),
      kv: chain(ctx.kv),
      atomic: chain(atomic),
      files: chain(ctx.files),
      log: chain(ctx.log, ownOfFunctions),
      env: typeof ctx.env,
    },
  };
}
