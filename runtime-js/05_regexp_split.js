// toolhost runtime glue: a fast path for `RegExp.prototype[Symbol.split]`.
//
// QuickJS implements `string.split(regexp)` the way the spec words it: a sticky
// copy of the pattern is tried at every index of the string, so
// `text.split(/\s+/)` on 200 characters runs the matcher about 200 times. That
// was a fifth of a small word-count handler's CPU (bench/RESULTS.md). V8 and
// SpiderMonkey take a fast path when the RegExp is an unmodified built-in; this
// is the same fast path: one global search from each piece's end, which tries
// the same start positions with the same matcher and so finds exactly the
// matches the sticky loop finds. Results are identical; a differential test
// (sandbox/tests/regexp_split.rs) compares both paths.
//
// Only a plain RegExp whose prototype, constructor and flag getters are the
// originals (checked on every call, as a handler may patch them) takes the
// fast path; anything else (a subclass, own properties, a patched `exec`) runs
// the original, so every observable step stays the spec's.

"use strict";

((globalThis) => {
  const { primordials } = globalThis.__bootstrap;
  const {
    ArrayFrom,
    FunctionPrototypeCall,
    MathMin,
    ObjectDefineProperty,
    ObjectGetOwnPropertyDescriptor,
    ObjectGetPrototypeOf,
    ReflectOwnKeys,
    RegExp,
    RegExpPrototype,
    RegExpPrototypeExec,
    RegExpPrototypeGetFlags,
    RegExpPrototypeGetSource,
    RegExpPrototypeSymbolSplit,
    SafeMap,
    MapPrototypeGet,
    MapPrototypeSet,
    MapPrototypeClear,
    MapPrototypeGetSize,
    StringPrototypeCharCodeAt,
    StringPrototypeIncludes,
    StringPrototypeSlice,
    SymbolMatch,
    SymbolSpecies,
    SymbolSplit,
  } = primordials;

  // What the spec's algorithm reads, with the values it has now: while all of
  // them are unchanged, the fast path is indistinguishable from the original.
  const WATCHED = [];
  function watch(object, key) {
    const descriptor = ObjectGetOwnPropertyDescriptor(object, key);
    if (descriptor !== undefined) {
      WATCHED[WATCHED.length] = {
        __proto__: null,
        object,
        key,
        value: descriptor.value,
        get: descriptor.get,
      };
    }
  }
  const FLAG_GETTERS = [
    "flags", "hasIndices", "global", "ignoreCase", "multiline", "dotAll",
    "unicode", "unicodeSets", "sticky",
  ];
  for (let i = 0; i < FLAG_GETTERS.length; i++) {
    watch(RegExpPrototype, FLAG_GETTERS[i]);
  }
  watch(RegExpPrototype, "constructor");
  watch(RegExpPrototype, "exec");
  watch(RegExpPrototype, SymbolMatch);
  watch(RegExp, SymbolSpecies);

  function isPristine(rx) {
    if (rx === null || typeof rx !== "object") {
      return false;
    }
    if (ObjectGetPrototypeOf(rx) !== RegExpPrototype) {
      return false;
    }
    // A real RegExp (the getter throws for anything else) whose only own
    // property is `lastIndex`.
    try {
      RegExpPrototypeGetSource(rx);
    } catch {
      return false;
    }
    const own = ReflectOwnKeys(rx);
    if (own.length !== 1 || own[0] !== "lastIndex") {
      return false;
    }
    for (let i = 0; i < WATCHED.length; i++) {
      const watched = WATCHED[i];
      const now = ObjectGetOwnPropertyDescriptor(watched.object, watched.key);
      if (now === undefined || now.value !== watched.value || now.get !== watched.get) {
        return false;
      }
    }
    return true;
  }

  // Global (never sticky) copies of the patterns split recently, by flags and
  // source: a RegExp literal is a new object on every evaluation, so the cache
  // cannot be keyed by object. Bounded, so a handler cannot grow it forever.
  const SPLITTERS = new SafeMap();
  const MAX_SPLITTERS = 64;

  function splitterFor(rx, flags) {
    let searchFlags = "g";
    for (let i = 0; i < flags.length; i++) {
      const flag = flags[i];
      if (flag !== "g" && flag !== "y") {
        searchFlags += flag;
      }
    }
    const key = `${searchFlags}/${RegExpPrototypeGetSource(rx)}`;
    let splitter = MapPrototypeGet(SPLITTERS, key);
    if (splitter === undefined) {
      if (MapPrototypeGetSize(SPLITTERS) >= MAX_SPLITTERS) {
        MapPrototypeClear(SPLITTERS);
      }
      splitter = new RegExp(rx, searchFlags);
      MapPrototypeSet(SPLITTERS, key, splitter);
    }
    return splitter;
  }

  // AdvanceStringIndex: one code unit, or a whole surrogate pair in unicode mode.
  function advance(string, index, unicode) {
    if (!unicode || index + 1 >= string.length) {
      return index + 1;
    }
    const lead = StringPrototypeCharCodeAt(string, index);
    if (lead < 0xd800 || lead > 0xdbff) {
      return index + 1;
    }
    const trail = StringPrototypeCharCodeAt(string, index + 1);
    return trail >= 0xdc00 && trail <= 0xdfff ? index + 2 : index + 1;
  }

  // The spec's steps, with the sticky scan replaced by a global search.
  // Pieces are collected in a null-prototype object and turned into the result
  // by Array.from, which defines elements (as the spec's CreateDataProperty
  // does) instead of assigning them through Array.prototype.
  function split(string, limit) {
    const rx = this;
    if (!isPristine(rx)) {
      return FunctionPrototypeCall(RegExpPrototypeSymbolSplit, rx, string, limit);
    }
    const S = `${string}`;
    const flags = RegExpPrototypeGetFlags(rx);
    const unicode = StringPrototypeIncludes(flags, "u") || StringPrototypeIncludes(flags, "v");
    const splitter = splitterFor(rx, flags);
    const lim = limit === undefined ? 0xffffffff : limit >>> 0;
    const pieces = { __proto__: null, length: 0 };
    if (lim === 0) {
      return ArrayFrom(pieces);
    }
    const size = S.length;
    if (size === 0) {
      splitter.lastIndex = 0;
      if (RegExpPrototypeExec(splitter, S) === null) {
        pieces[0] = S;
        pieces.length = 1;
      }
      return ArrayFrom(pieces);
    }
    let count = 0;
    let p = 0;
    let q = 0;
    while (q < size) {
      splitter.lastIndex = q;
      const match = RegExpPrototypeExec(splitter, S);
      if (match === null) {
        break;
      }
      const start = match.index;
      if (start >= size) {
        break;
      }
      const end = MathMin(splitter.lastIndex, size);
      if (end === p) {
        q = advance(S, start, unicode);
        continue;
      }
      pieces[count++] = StringPrototypeSlice(S, p, start);
      if (count === lim) {
        pieces.length = count;
        return ArrayFrom(pieces);
      }
      p = end;
      for (let i = 1; i < match.length; i++) {
        pieces[count++] = match[i];
        if (count === lim) {
          pieces.length = count;
          return ArrayFrom(pieces);
        }
      }
      q = p;
    }
    pieces[count++] = StringPrototypeSlice(S, p, size);
    pieces.length = count;
    return ArrayFrom(pieces);
  }

  // Same name, length and attributes as the built-in it stands in for.
  ObjectDefineProperty(split, "name", { __proto__: null, value: "[Symbol.split]" });
  ObjectDefineProperty(RegExpPrototype, SymbolSplit, {
    __proto__: null,
    value: split,
    writable: true,
    enumerable: false,
    configurable: true,
  });
})(globalThis);
