// toolhost runtime glue: WebCrypto, the globals `crypto`, `Crypto`,
// `SubtleCrypto` and `CryptoKey`. Paired with sandbox/src/ops/crypto.rs, which
// does the key formats and the mathematics; this file does what WebIDL and the
// key's bookkeeping ask: arguments, algorithm names, usages, `extractable`.
//
// A key's bytes live in a private slot of its CryptoKey (a WeakMap no handler
// can reach) and go to the op of each call; Rust keeps nothing. Every result
// is a copy, so a handler holds nothing the glue still uses.

"use strict";

((globalThis) => {
  const { core, primordials, toolhost } = globalThis.__bootstrap;
  const {
    op_crypto_digest,
    op_crypto_export_key,
    op_crypto_generate_key,
    op_crypto_get_random_values,
    op_crypto_import_key,
    op_crypto_random_uuid,
    op_crypto_sign,
    op_crypto_verify,
  } = core.ops;
  const {
    ArrayBufferIsView,
    ArrayBufferPrototypeGetByteLength,
    ArrayIsArray,
    ArrayPrototypeFilter,
    ArrayPrototypeIncludes,
    ArrayPrototypePush,
    DataViewPrototypeGetBuffer,
    DataViewPrototypeGetByteLength,
    DataViewPrototypeGetByteOffset,
    Error,
    MathTrunc,
    NumberIsFinite,
    ObjectCreate,
    ObjectDefineProperty,
    SafeWeakMap,
    String,
    StringPrototypeToLowerCase,
    SymbolToStringTag,
    TypeError,
    TypedArrayPrototypeGetBuffer,
    TypedArrayPrototypeGetByteLength,
    TypedArrayPrototypeGetByteOffset,
    TypedArrayPrototypeGetSymbolToStringTag,
    TypedArrayPrototypeSlice,
    Uint8Array,
    WeakMapPrototypeGet,
    WeakMapPrototypeSet,
  } = primordials;

  // The DOMException WebCrypto throws (built by 50_web.js, which also turns the
  // ops' `DOMException<Name>` errors into DOMExceptions).
  function domException(message, name) {
    return toolhost.domException(message, name);
  }

  function requiredArguments(given, required, what) {
    if (given < required) {
      throw new TypeError(
        `${what}: ${required} argument${required === 1 ? "" : "s"} required, ${given} given`,
      );
    }
  }

  function isArrayBuffer(value) {
    try {
      ArrayBufferPrototypeGetByteLength(value);
      return true;
    } catch {
      return false;
    }
  }

  // The largest input the ops take (MAX_INPUT_BYTES in crypto.rs), checked
  // here too so an oversized input is refused before it is copied.
  const MAX_INPUT_BYTES = 16 * 1024 * 1024;

  // A copy of a BufferSource's bytes, taken at the call as WebCrypto says.
  function bufferSource(value, what) {
    let view;
    if (ArrayBufferIsView(value)) {
      view = TypedArrayPrototypeGetSymbolToStringTag(value) !== undefined
        ? new Uint8Array(
          TypedArrayPrototypeGetBuffer(value),
          TypedArrayPrototypeGetByteOffset(value),
          TypedArrayPrototypeGetByteLength(value),
        )
        : new Uint8Array(
          DataViewPrototypeGetBuffer(value),
          DataViewPrototypeGetByteOffset(value),
          DataViewPrototypeGetByteLength(value),
        );
    } else if (isArrayBuffer(value)) {
      view = new Uint8Array(value);
    } else {
      throw new TypeError(`${what}: data must be an ArrayBuffer, a typed array or a DataView`);
    }
    if (TypedArrayPrototypeGetByteLength(view) > MAX_INPUT_BYTES) {
      throw domException(
        `${what}: the input is larger than the sandbox's limit of 16 MiB`,
        "OperationError",
      );
    }
    return TypedArrayPrototypeSlice(view);
  }

  // An op's bytes as the ArrayBuffer WebCrypto returns.
  function arrayBuffer(bytes) {
    const buffer = TypedArrayPrototypeGetBuffer(bytes);
    if (
      TypedArrayPrototypeGetByteOffset(bytes) === 0 &&
      TypedArrayPrototypeGetByteLength(bytes) === ArrayBufferPrototypeGetByteLength(buffer)
    ) {
      return buffer;
    }
    return TypedArrayPrototypeGetBuffer(TypedArrayPrototypeSlice(bytes));
  }

  // Algorithm names per operation, matched without regard to case.
  const DIGESTS = { __proto__: null, "sha-1": "SHA-1", "sha-256": "SHA-256", "sha-384": "SHA-384", "sha-512": "SHA-512" };
  const SIGNERS = { __proto__: null, "hmac": "HMAC", "ed25519": "Ed25519", "ecdsa": "ECDSA" };

  function algorithmName(algorithm, names, what) {
    let name;
    if (typeof algorithm === "string") {
      name = algorithm;
    } else if (algorithm !== null && typeof algorithm === "object") {
      if (algorithm.name === undefined) {
        throw new TypeError(`${what}: the algorithm has no name`);
      }
      name = String(algorithm.name);
    } else {
      throw new TypeError(`${what}: the algorithm must be a string or an object with a name`);
    }
    const known = names[StringPrototypeToLowerCase(name)];
    if (known === undefined) {
      throw domException(`${what}: the algorithm ${name} is not supported`, "NotSupportedError");
    }
    return known;
  }

  function hashMember(algorithm, what) {
    const hash = algorithm.hash;
    if (hash === undefined) {
      throw new TypeError(`${what}: the algorithm needs a hash`);
    }
    return algorithmName(hash, DIGESTS, what);
  }

  // The parameters an operation reads for an algorithm, normalized.
  // op: "importKey", "generateKey", "sign" (also verify).
  function normalize(algorithm, op, what) {
    const name = algorithmName(algorithm, SIGNERS, what);
    const params = typeof algorithm === "string" ? { __proto__: null } : algorithm;
    if (name === "HMAC" && op !== "sign") {
      // [EnforceRange] unsigned long
      let length = params.length;
      if (length !== undefined) {
        length = +length;
        if (!NumberIsFinite(length) || MathTrunc(length) < 0 || MathTrunc(length) > 0xffffffff) {
          throw new TypeError(`${what}: the HMAC length must be an unsigned 32-bit integer`);
        }
        length = MathTrunc(length);
      }
      return { name, hash: hashMember(params, what), length };
    }
    if (name === "ECDSA" && op === "sign") {
      return { name, hash: hashMember(params, what) };
    }
    if (name === "ECDSA") {
      const namedCurve = params.namedCurve;
      if (namedCurve === undefined) {
        throw new TypeError(`${what}: the algorithm needs a namedCurve`);
      }
      return { name, namedCurve: String(namedCurve) };
    }
    return { name };
  }

  const FORMATS = ["raw", "spki", "pkcs8", "jwk"];
  const USAGES = ["encrypt", "decrypt", "sign", "verify", "deriveKey", "deriveBits", "wrapKey", "unwrapKey"];

  function formatArg(format, what) {
    const value = String(format);
    if (!ArrayPrototypeIncludes(FORMATS, value)) {
      throw new TypeError(`${what}: ${value} is not a key format`);
    }
    return value;
  }

  function usagesArg(usages, what) {
    if (!ArrayIsArray(usages)) {
      throw new TypeError(`${what}: keyUsages must be an array`);
    }
    const list = [];
    for (let i = 0; i < usages.length; i++) {
      const usage = String(usages[i]);
      if (!ArrayPrototypeIncludes(USAGES, usage)) {
        throw new TypeError(`${what}: ${usage} is not a key usage`);
      }
      if (!ArrayPrototypeIncludes(list, usage)) {
        ArrayPrototypePush(list, usage);
      }
    }
    return list;
  }

  function checkUsages(usages, allowed, what) {
    for (let i = 0; i < usages.length; i++) {
      if (!ArrayPrototypeIncludes(allowed, usages[i])) {
        throw domException(`${what}: this key cannot be used to ${usages[i]}`, "SyntaxError");
      }
    }
  }

  function only(usages, allowed) {
    return ArrayPrototypeFilter(usages, (usage) => ArrayPrototypeIncludes(allowed, usage));
  }

  // The string members of a JsonWebKey the ops read, and the checks of `use`,
  // `key_ops` and `ext` against the import.
  function jsonWebKey(value, extractable, usages, what) {
    if (value === null || typeof value !== "object") {
      throw new TypeError(`${what}: a jwk key must be an object`);
    }
    const jwk = { __proto__: null };
    const names = ["kty", "crv", "alg", "k", "x", "y", "d"];
    for (let i = 0; i < names.length; i++) {
      const member = value[names[i]];
      if (member !== undefined) {
        jwk[names[i]] = String(member);
      }
    }
    if (usages.length > 0 && value.use !== undefined && String(value.use) !== "sig") {
      throw domException(`${what}: the JWK's use is not sig`, "DataError");
    }
    if (value.key_ops !== undefined) {
      const ops = usagesArg(value.key_ops, what);
      if (ops.length !== value.key_ops.length) {
        throw domException(`${what}: the JWK's key_ops repeat a usage`, "DataError");
      }
      for (let i = 0; i < usages.length; i++) {
        if (!ArrayPrototypeIncludes(ops, usages[i])) {
          throw domException(`${what}: the JWK's key_ops do not allow ${usages[i]}`, "DataError");
        }
      }
    }
    if (value.ext === false && extractable) {
      throw domException(`${what}: the JWK is not extractable`, "DataError");
    }
    return jwk;
  }

  function copyList(list) {
    const copy = [];
    for (let i = 0; i < list.length; i++) {
      ArrayPrototypePush(copy, list[i]);
    }
    return copy;
  }

  // CryptoKey: its slots { type, extractable, algorithm, usages, material,
  // hash }, where `algorithm` and `usages` are what the getters return.
  const slots = new SafeWeakMap();

  function keySlots(key, what) {
    const found = key !== null && typeof key === "object" ? WeakMapPrototypeGet(slots, key) : undefined;
    if (found === undefined) {
      throw new TypeError(`${what}: not a CryptoKey`);
    }
    return found;
  }

  class CryptoKey {
    constructor() {
      throw new TypeError("Illegal constructor");
    }

    get type() {
      return keySlots(this, "CryptoKey.type").type;
    }

    get extractable() {
      return keySlots(this, "CryptoKey.extractable").extractable;
    }

    get algorithm() {
      return keySlots(this, "CryptoKey.algorithm").algorithm;
    }

    get usages() {
      return keySlots(this, "CryptoKey.usages").usages;
    }
  }
  ObjectDefineProperty(CryptoKey.prototype, SymbolToStringTag, {
    __proto__: null,
    value: "CryptoKey",
    configurable: true,
  });

  // `algorithm` is { name, hash?, length?, namedCurve? } as normalized.
  function makeKey(type, extractable, algorithm, usages, material) {
    const key = ObjectCreate(CryptoKey.prototype);
    let view;
    if (algorithm.name === "HMAC") {
      view = { name: "HMAC", hash: { name: algorithm.hash }, length: algorithm.length };
    } else if (algorithm.name === "ECDSA") {
      view = { name: "ECDSA", namedCurve: algorithm.namedCurve };
    } else {
      view = { name: algorithm.name };
    }
    WeakMapPrototypeSet(slots, key, {
      __proto__: null,
      type,
      extractable,
      algorithm: view,
      usages: copyList(usages),
      name: algorithm.name,
      hash: algorithm.hash,
      usageList: usages,
      material,
    });
    return key;
  }

  // The type a key of `format` will have, so usages are checked before the
  // key data is, as WebCrypto orders it.
  function importedType(name, format, jwk) {
    if (name === "HMAC") {
      return "secret";
    }
    if (format === "jwk") {
      return jwk.d === undefined ? "public" : "private";
    }
    return format === "pkcs8" ? "private" : "public";
  }

  const NO_BYTES = new Uint8Array(0);
  let subtle;
  let crypto;

  function checkSubtle(self, what) {
    if (self !== subtle) {
      throw new TypeError(`${what}: illegal invocation`);
    }
  }

  class SubtleCrypto {
    constructor() {
      throw new TypeError("Illegal constructor");
    }

    async digest(algorithm, data) {
      const what = "SubtleCrypto.digest";
      checkSubtle(this, what);
      requiredArguments(arguments.length, 2, what);
      const bytes = bufferSource(data, what);
      const name = algorithmName(algorithm, DIGESTS, what);
      return arrayBuffer(op_crypto_digest(name, bytes));
    }

    async importKey(format, keyData, algorithm, extractable, keyUsages) {
      const what = "SubtleCrypto.importKey";
      checkSubtle(this, what);
      requiredArguments(arguments.length, 5, what);
      format = formatArg(format, what);
      extractable = !!extractable;
      const usages = usagesArg(keyUsages, what);
      let jwk;
      let bytes = NO_BYTES;
      if (format === "jwk") {
        jwk = jsonWebKey(keyData, extractable, usages, what);
      } else {
        bytes = bufferSource(keyData, what);
      }
      const params = normalize(algorithm, "importKey", what);
      const type = importedType(params.name, format, jwk);
      checkUsages(usages, type === "secret" ? ["sign", "verify"] : type === "private" ? ["sign"] : ["verify"], what);
      const imported = op_crypto_import_key({
        algorithm: params.name,
        format,
        hash: params.hash,
        length: params.length,
        namedCurve: params.namedCurve,
        jwk,
      }, bytes);
      if (type !== "public" && usages.length === 0) {
        throw domException(`${what}: a ${type} key needs at least one usage`, "SyntaxError");
      }
      const algo = { __proto__: null, ...params, length: imported.length };
      return makeKey(imported.kind, extractable, algo, usages, imported.material);
    }

    async exportKey(format, key) {
      const what = "SubtleCrypto.exportKey";
      checkSubtle(this, what);
      requiredArguments(arguments.length, 2, what);
      format = formatArg(format, what);
      const slot = keySlots(key, what);
      if (!slot.extractable) {
        throw domException(`${what}: the key is not extractable`, "InvalidAccessError");
      }
      const exported = op_crypto_export_key({
        algorithm: slot.name,
        format,
        kind: slot.type,
        hash: slot.hash,
      }, slot.material);
      if (format !== "jwk") {
        return arrayBuffer(exported);
      }
      exported.key_ops = copyList(slot.usageList);
      exported.ext = slot.extractable;
      return exported;
    }

    async generateKey(algorithm, extractable, keyUsages) {
      const what = "SubtleCrypto.generateKey";
      checkSubtle(this, what);
      requiredArguments(arguments.length, 3, what);
      extractable = !!extractable;
      const usages = usagesArg(keyUsages, what);
      const params = normalize(algorithm, "generateKey", what);
      checkUsages(usages, ["sign", "verify"], what);
      const generated = op_crypto_generate_key({
        algorithm: params.name,
        hash: params.hash,
        length: params.length,
        namedCurve: params.namedCurve,
      });
      if (params.name === "HMAC") {
        if (usages.length === 0) {
          throw domException(`${what}: a secret key needs at least one usage`, "SyntaxError");
        }
        const algo = { __proto__: null, ...params, length: generated.length };
        return makeKey("secret", extractable, algo, usages, generated.secret);
      }
      const signing = only(usages, ["sign"]);
      if (signing.length === 0) {
        throw domException(`${what}: a private key needs the sign usage`, "SyntaxError");
      }
      return {
        publicKey: makeKey("public", true, params, only(usages, ["verify"]), generated.public),
        privateKey: makeKey("private", extractable, params, signing, generated.private),
      };
    }

    async sign(algorithm, key, data) {
      const what = "SubtleCrypto.sign";
      checkSubtle(this, what);
      requiredArguments(arguments.length, 3, what);
      const bytes = bufferSource(data, what);
      const params = normalize(algorithm, "sign", what);
      const slot = usableKey(key, params, "sign", what);
      return arrayBuffer(op_crypto_sign(params.name, signingHash(params, slot), slot.material, bytes));
    }

    async verify(algorithm, key, signature, data) {
      const what = "SubtleCrypto.verify";
      checkSubtle(this, what);
      requiredArguments(arguments.length, 4, what);
      const signatureBytes = bufferSource(signature, what);
      const bytes = bufferSource(data, what);
      const params = normalize(algorithm, "sign", what);
      const slot = usableKey(key, params, "verify", what);
      return op_crypto_verify(params.name, signingHash(params, slot), slot.material, signatureBytes, bytes);
    }
  }
  ObjectDefineProperty(SubtleCrypto.prototype, SymbolToStringTag, {
    __proto__: null,
    value: "SubtleCrypto",
    configurable: true,
  });

  // The key's slots, once it may do `usage` with the algorithm `params` names.
  function usableKey(key, params, usage, what) {
    const slot = keySlots(key, what);
    if (slot.name !== params.name) {
      throw domException(`${what}: the key is a ${slot.name} key, not ${params.name}`, "InvalidAccessError");
    }
    if (!ArrayPrototypeIncludes(slot.usageList, usage)) {
      throw domException(`${what}: the key's usages do not include ${usage}`, "InvalidAccessError");
    }
    return slot;
  }

  // HMAC hashes with the key's hash, ECDSA with the call's, Ed25519 with none.
  function signingHash(params, slot) {
    if (params.name === "HMAC") {
      return slot.hash;
    }
    return params.hash ?? "";
  }

  const INTEGER_ARRAYS = [
    "Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array",
    "Int32Array", "Uint32Array", "BigInt64Array", "BigUint64Array",
  ];
  const MAX_RANDOM_BYTES = 65536;

  class Crypto {
    constructor() {
      throw new TypeError("Illegal constructor");
    }

    get subtle() {
      if (this !== crypto) {
        throw new TypeError("Crypto.subtle: illegal invocation");
      }
      return subtle;
    }

    getRandomValues(array) {
      const what = "Crypto.getRandomValues";
      if (this !== crypto) {
        throw new TypeError(`${what}: illegal invocation`);
      }
      requiredArguments(arguments.length, 1, what);
      if (!ArrayBufferIsView(array)) {
        throw new TypeError(`${what}: the argument must be an integer typed array`);
      }
      const tag = TypedArrayPrototypeGetSymbolToStringTag(array);
      if (!ArrayPrototypeIncludes(INTEGER_ARRAYS, tag)) {
        throw domException(`${what}: the argument must be an integer typed array`, "TypeMismatchError");
      }
      const length = TypedArrayPrototypeGetByteLength(array);
      if (length > MAX_RANDOM_BYTES) {
        throw domException(
          `${what}: at most ${MAX_RANDOM_BYTES} bytes at once, not ${length}`,
          "QuotaExceededError",
        );
      }
      op_crypto_get_random_values(new Uint8Array(
        TypedArrayPrototypeGetBuffer(array),
        TypedArrayPrototypeGetByteOffset(array),
        length,
      ));
      return array;
    }

    randomUUID() {
      if (this !== crypto) {
        throw new TypeError("Crypto.randomUUID: illegal invocation");
      }
      return op_crypto_random_uuid();
    }
  }
  ObjectDefineProperty(Crypto.prototype, SymbolToStringTag, {
    __proto__: null,
    value: "Crypto",
    configurable: true,
  });

  subtle = ObjectCreate(SubtleCrypto.prototype);
  crypto = ObjectCreate(Crypto.prototype);

  const globals = { crypto, Crypto, CryptoKey, SubtleCrypto };
  const names = ["crypto", "Crypto", "CryptoKey", "SubtleCrypto"];
  for (let i = 0; i < names.length; i++) {
    ObjectDefineProperty(globalThis, names[i], {
      __proto__: null,
      value: globals[names[i]],
      writable: true,
      enumerable: false,
      configurable: true,
    });
  }
})(globalThis);
