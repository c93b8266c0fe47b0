// A hosted x402 facilitator stand-in that checks credentials the way hosted ones document them,
// for tests/api/facilitator_auth.rs. Loopback only; it moves no money.
//
//   node facilitator.mjs '<config JSON>'
//
// Config: {mode, dir, kinds}
// - mode "cdp-ed25519" / "cdp-es256": every request must carry `Authorization: Bearer <JWT>` as
//   the Coinbase Developer Platform documents it: signed by the API key it generates here
//   (EdDSA / ES256), `kid` and `sub` the key id, `iss` "cdp", a fresh `nonce` in the header,
//   at most 120 s between `nbf` and `exp`, and `uris` naming this request ("METHOD host/path").
//   It writes the key as CDP hands it out to `dir`: `key.json` ({id, privateKey}), the secret
//   alone in `key.txt` (base64 for Ed25519, a SEC1 PEM for ES256), and `other.json`, a key of
//   the same kind it does not accept.
// - mode "bearer": `Authorization: Bearer <bearer>` and every header of `headers` ({name: value}).
// - mode "redirect": answers every request with a 307 to another origin, which counts what
//   arrives there (`/_requests` reports it as `redirectedArrivals`).
// - kinds: the `kinds` of `/supported` (changed by `POST /_kinds`).
// Prints `listening <port>` once it serves. `GET /_requests` lists what came in:
// [{method, path, refused, scheme, amount}] (`refused`: why the credentials were refused, or
// null; `scheme` and `amount`: those of the requirements a /verify or /settle was given).
import http from 'node:http';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { jwtVerify } from 'jose';

const config = JSON.parse(process.argv[2]);
let kinds = config.kinds;
const requests = [];
const nonces = new Set();
let redirectedArrivals = 0;

const keyId = 'organizations/toolhost-test/apiKeys/' + crypto.randomUUID();
let publicKey = null;
let algorithm = null;

function writeOwnerOnly(name, text) {
  const file = path.join(config.dir, name);
  fs.writeFileSync(file, text, { mode: 0o600 });
}

function cdpSecret(privateKey, kind) {
  if (kind === 'ed25519') {
    // CDP shows an Ed25519 secret as base64 of the 32-byte seed and the 32-byte public key.
    const jwk = privateKey.export({ format: 'jwk' });
    return Buffer.concat([Buffer.from(jwk.d, 'base64url'), Buffer.from(jwk.x, 'base64url')]).toString('base64');
  }
  return privateKey.export({ type: 'sec1', format: 'pem' });
}

if (config.mode.startsWith('cdp-')) {
  const kind = config.mode === 'cdp-ed25519' ? 'ed25519' : 'ec';
  const options = kind === 'ec' ? { namedCurve: 'P-256' } : undefined;
  const pair = crypto.generateKeyPairSync(kind, options);
  const other = crypto.generateKeyPairSync(kind, options);
  publicKey = pair.publicKey;
  algorithm = kind === 'ed25519' ? 'EdDSA' : 'ES256';
  writeOwnerOnly('key.json', JSON.stringify({ id: keyId, privateKey: cdpSecret(pair.privateKey, kind) }));
  writeOwnerOnly('key.txt', cdpSecret(pair.privateKey, kind));
  writeOwnerOnly('key-id.txt', keyId);
  writeOwnerOnly('other.json', JSON.stringify({ id: keyId, privateKey: cdpSecret(other.privateKey, kind) }));
}

async function refusal(req, url) {
  if (config.mode === 'bearer') {
    if (req.headers.authorization !== `Bearer ${config.bearer}`) return 'bearer token';
    for (const [name, value] of Object.entries(config.headers ?? {})) {
      if (req.headers[name.toLowerCase()] !== value) return `header ${name}`;
    }
    return null;
  }
  const auth = req.headers.authorization ?? '';
  if (!auth.startsWith('Bearer ')) return 'no bearer token';
  let verified;
  try {
    verified = await jwtVerify(auth.slice('Bearer '.length), publicKey, {
      issuer: 'cdp',
      subject: keyId,
      algorithms: [algorithm],
      typ: 'JWT',
    });
  } catch (e) {
    return `jwt: ${e.code ?? e.message}`;
  }
  const { payload, protectedHeader } = verified;
  if (protectedHeader.kid !== keyId) return 'kid';
  const nonce = protectedHeader.nonce;
  if (typeof nonce !== 'string' || nonce.length < 16) return 'no nonce';
  if (nonces.has(nonce)) return 'nonce used before';
  nonces.add(nonce);
  if (!(payload.exp - payload.nbf <= 120)) return 'lives longer than 120 s';
  const uri = `${req.method} ${req.headers.host}${url.pathname}`;
  if (!Array.isArray(payload.uris) || !payload.uris.includes(uri)) {
    return `uris ${JSON.stringify(payload.uris)} do not name ${uri}`;
  }
  return null;
}

function send(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readJson(req) {
  let text = '';
  for await (const chunk of req) text += chunk;
  return text ? JSON.parse(text) : null;
}

// The other origin a redirect points at: anything arriving here followed it.
const elsewhere = http.createServer((req, res) => {
  redirectedArrivals += 1;
  send(res, 200, { kinds });
});

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://localhost');
  try {
    if (url.pathname === '/_requests') return send(res, 200, { requests, redirectedArrivals });
    if (url.pathname === '/_kinds') {
      kinds = await readJson(req);
      return send(res, 200, { kinds });
    }
    if (config.mode === 'redirect') {
      requests.push({ method: req.method, path: url.pathname, refused: null });
      res.writeHead(307, { location: `http://localhost:${elsewhere.address().port}${url.pathname}` });
      return res.end();
    }
    const refused = await refusal(req, url);
    const body = req.method === 'POST' && !refused ? await readJson(req) : null;
    // What was asked of it: the scheme and amount of the requirements it was given.
    const asked = body?.paymentRequirements;
    requests.push({ method: req.method, path: url.pathname, refused, scheme: asked?.scheme ?? null, amount: asked?.amount ?? null });
    if (refused) return send(res, 401, { error: 'unauthorized', message: refused });
    // `exact` names the payer in `authorization`, `upto` in `permit2Authorization`.
    const payload = body?.paymentPayload?.payload;
    const authorization = payload?.authorization ?? payload?.permit2Authorization;
    switch (`${req.method} ${url.pathname}`) {
      case 'GET /supported':
        return send(res, 200, { kinds, extensions: [], signers: {} });
      case 'POST /verify':
        return send(res, 200, { isValid: true, payer: authorization?.from });
      case 'POST /settle':
        return send(res, 200, {
          success: true,
          transaction: '0x' + 'cd'.repeat(32),
          network: body.paymentRequirements.network,
          payer: authorization?.from,
        });
      default:
        return send(res, 404, { error: 'not_found' });
    }
  } catch (e) {
    send(res, 500, { error: String(e) });
  }
});

elsewhere.listen(0, '127.0.0.1', () => {
  server.listen(0, '127.0.0.1', () => {
    console.log(`listening ${server.address().port}`);
  });
});
