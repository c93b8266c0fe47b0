// toolhost runtime glue: a fast path for `RegExp.prototype[Symbol.split]`,
// installed by `setup` as `__bootstrap.toolhost.installFastRegExpSplit`.
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
// Installed by `setup` (90_bootstrap.js) on the live intrinsics: the QuickJS
// backend's startup snapshot restores the built-in prototypes fresh, so a patch
// made while the snapshot is built would not be there, and `primordials` may
// hold the snapshot's copies. Everything below is therefore taken from the live
// globals when `install` runs, before any handler code.
//
// Only a plain RegExp whose prototype, constructor and flag getters are the
// originals (checked on every call, as a handler may patch them) takes the
// fast path; anything else (a subclass, own properties, a patched `exec`) runs
// the original, so every observable step stays the spec's.

"use strict";

((globalThis) => {
  function install(realm) {
    const {
      Array,
      Math,
      Object,
      Reflect,
      RegExp,
      Symbol,
    } = realm;
    const ArrayFrom = Array.from;
    const MathMin = Math.min;
    const ObjectDefineProperty = Object.defineProperty;
    const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
    const ObjectGetPrototypeOf = Object.getPrototypeOf;
    const ReflectApply = Reflect.apply;
    const ReflectOwnKeys = Reflect.ownKeys;
    const RegExpPrototype = RegExp.prototype;
    const exec = RegExpPrototype.exec;
    const getFlags = ObjectGetOwnPropertyDescriptor(RegExpPrototype, "flags").get;
    const getSource = ObjectGetOwnPropertyDescriptor(RegExpPrototype, "source").get;
    const original = RegExpPrototype[Symbol.split];
    const charCodeAt = realm.String.prototype.charCodeAt;
    const slice = realm.String.prototype.slice;
    const includes = realm.String.prototype.includes;
    const SafeMap = realm.Map;
    const mapGet = SafeMap.prototype.get;
    const mapSet = SafeMap.prototype.set;
    const mapClear = SafeMap.prototype.clear;
    const mapSize = ObjectGetOwnPropertyDescriptor(SafeMap.prototype, "size").get;

    // What the spec's algorithm reads, with the values it has now: while all
    // of them are unchanged, the fast path is indistinguishable from the original.
    const watched = [];
    function watch(object, key) {
      const descriptor = ObjectGetOwnPropertyDescriptor(object, key);
      if (descriptor !== undefined) {
        ObjectDefineProperty(watched, watched.length, {
          __proto__: null,
          value: { __proto__: null, object, key, value: descriptor.value, get: descriptor.get },
          enumerable: true,
        });
      }
    }
    const flagGetters = [
      "flags", "hasIndices", "global", "ignoreCase", "multiline", "dotAll",
      "unicode", "unicodeSets", "sticky",
    ];
    for (let i = 0; i < flagGetters.length; i++) {
      watch(RegExpPrototype, flagGetters[i]);
    }
    watch(RegExpPrototype, "constructor");
    watch(RegExpPrototype, "exec");
    watch(RegExpPrototype, Symbol.match);
    watch(RegExp, Symbol.species);
    const watchedCount = watched.length;

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
        ReflectApply(getSource, rx, []);
      } catch {
        return false;
      }
      const own = ReflectOwnKeys(rx);
      if (own.length !== 1 || own[0] !== "lastIndex") {
        return false;
      }
      for (let i = 0; i < watchedCount; i++) {
        const entry = watched[i];
        const now = ObjectGetOwnPropertyDescriptor(entry.object, entry.key);
        if (now === undefined || now.value !== entry.value || now.get !== entry.get) {
          return false;
        }
      }
      return true;
    }

    // Global (never sticky) copies of the patterns split recently, by flags
    // and source: a RegExp literal is a new object on every evaluation, so the
    // cache cannot be keyed by object. Bounded, so a handler cannot grow it.
    const splitters = new SafeMap();
    const MAX_SPLITTERS = 64;

    function splitterFor(rx, flags) {
      let searchFlags = "g";
      for (let i = 0; i < flags.length; i++) {
        const flag = flags[i];
        if (flag !== "g" && flag !== "y") {
          searchFlags += flag;
        }
      }
      const key = `${searchFlags}/${ReflectApply(getSource, rx, [])}`;
      let splitter = ReflectApply(mapGet, splitters, [key]);
      if (splitter === undefined) {
        if (ReflectApply(mapSize, splitters, []) >= MAX_SPLITTERS) {
          ReflectApply(mapClear, splitters, []);
        }
        splitter = new RegExp(rx, searchFlags);
        ReflectApply(mapSet, splitters, [key, splitter]);
      }
      return splitter;
    }

    // AdvanceStringIndex: one code unit, or a whole surrogate pair in unicode mode.
    function advance(string, index, unicode) {
      if (!unicode || index + 1 >= string.length) {
        return index + 1;
      }
      const lead = ReflectApply(charCodeAt, string, [index]);
      if (lead < 0xd800 || lead > 0xdbff) {
        return index + 1;
      }
      const trail = ReflectApply(charCodeAt, string, [index + 1]);
      return trail >= 0xdc00 && trail <= 0xdfff ? index + 2 : index + 1;
    }

    // The spec's steps, with the sticky scan replaced by a global search.
    // Pieces are collected in a null-prototype object and turned into the
    // result by Array.from, which defines elements (as the spec's
    // CreateDataProperty does) instead of assigning them through
    // Array.prototype.
    function split(string, limit) {
      const rx = this;
      if (!isPristine(rx)) {
        return ReflectApply(original, rx, [string, limit]);
      }
      const S = `${string}`;
      const flags = ReflectApply(getFlags, rx, []);
      const unicode = ReflectApply(includes, flags, ["u"]) || ReflectApply(includes, flags, ["v"]);
      const splitter = splitterFor(rx, flags);
      const lim = limit === undefined ? 0xffffffff : limit >>> 0;
      const pieces = { __proto__: null, length: 0 };
      if (lim === 0) {
        return ArrayFrom(pieces);
      }
      const size = S.length;
      if (size === 0) {
        splitter.lastIndex = 0;
        if (ReflectApply(exec, splitter, [S]) === null) {
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
        const match = ReflectApply(exec, splitter, [S]);
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
        pieces[count++] = ReflectApply(slice, S, [p, start]);
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
      pieces[count++] = ReflectApply(slice, S, [p, size]);
      pieces.length = count;
      return ArrayFrom(pieces);
    }

    // Same name, length and attributes as the built-in it stands in for.
    ObjectDefineProperty(split, "name", { __proto__: null, value: "[Symbol.split]" });
    ObjectDefineProperty(RegExpPrototype, Symbol.split, {
      __proto__: null,
      value: split,
      writable: true,
      enumerable: false,
      configurable: true,
    });
  }

  globalThis.__bootstrap.toolhost.installFastRegExpSplit = install;
})(globalThis);
