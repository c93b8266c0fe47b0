// Writes the generated part of web/toolhost.d.ts: the web globals a handler isolate has, as
// TypeScript's own lib.webworker.d.ts declares them, cut to what the runtime really provides.
//
//   node web-globals.mjs          rewrite web/toolhost.d.ts below its "generated" line
//   (types.test.mjs checks that the file is what this would write)
//
// Which globals and members: tests/types/surface.json, the runtime's surface read from inside a
// real isolate (sandbox/tests/surface.rs). A global is declared when the runtime has it and
// lib.webworker declares it as a value; the interface of a class or object keeps only the
// members the runtime has; every type those declarations name is copied along (types only: a
// type such as MessagePort is there for signatures, its global is not). TypeScript's JSDoc is
// kept, so an editor shows the same documentation as for a browser.

import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, "..", "..");
export const dtsPath = path.join(root, "web", "toolhost.d.ts");
export const surfacePath = path.join(here, "surface.json");

export const MARKER =
  "// ---- generated below this line by tests/types/web-globals.mjs: do not edit by hand ----";

const LIBS = ["lib.webworker.d.ts", "lib.webworker.iterable.d.ts", "lib.webworker.asynciterable.d.ts"];

// Types of lib.webworker replaced by narrower ones: what the isolate can transfer or serialize.
// The originals name OffscreenCanvas, ImageBitmap, VideoFrame and MessagePort, none of which a
// handler has, and would pull in most of the browser's types.
const OVERRIDES = {
  Transferable: "type Transferable = ArrayBuffer | ReadableStream | WritableStream | TransformStream;",
};

function libDir() {
  const require = createRequire(import.meta.url);
  return path.dirname(require.resolve("typescript/lib/lib.d.ts"));
}

// Where a statement's own text starts: its JSDoc, else its first token (not the file's notice
// and reference lines before the first statement).
function startOf(node, sf) {
  return node.jsDoc?.length ? node.jsDoc[0].getStart(sf) : node.getStart(sf);
}

function memberName(member, sf) {
  const name = member.name;
  if (!name) return null; // call, construct and index signatures
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isPrivateIdentifier(name)) return name.text;
  return name.getText(sf); // [Symbol.iterator]
}

// The leftmost identifier of every type a node names.
function typeRefs(node, out) {
  const visit = (n) => {
    if (ts.isTypeReferenceNode(n)) {
      let name = n.typeName;
      while (ts.isQualifiedName(name)) name = name.left;
      out.add(name.text);
    } else if (ts.isExpressionWithTypeArguments(n) && ts.isIdentifier(n.expression)) {
      out.add(n.expression.text);
    }
    ts.forEachChild(n, visit);
  };
  visit(node);
}

/** The generated text (everything after MARKER) for a runtime surface. */
export function generate(surface) {
  const dir = libDir();
  const files = LIBS.map((name) =>
    ts.createSourceFile(name, fs.readFileSync(path.join(dir, name), "utf8"), ts.ScriptTarget.Latest, true),
  );
  const runtime = surface.globals;

  // Every top-level declaration of the libs by name.
  const types = new Map(); // interface or type alias name -> [{ sf, node }]
  const values = new Map(); // var or function name -> [{ sf, node }]
  const add = (map, name, entry) => (map.get(name) ?? map.set(name, []).get(name)).push(entry);
  for (const sf of files) {
    for (const node of sf.statements) {
      if (ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) {
        add(types, node.name.text, { sf, node });
      } else if (ts.isFunctionDeclaration(node) && node.name) {
        add(values, node.name.text, { sf, node });
      } else if (ts.isVariableStatement(node)) {
        for (const d of node.declarationList.declarations) add(values, d.name.getText(sf), { sf, node });
      }
    }
  }

  // The globals: what the runtime has and lib.webworker declares as a value.
  const globals = Object.keys(runtime).filter((name) => values.has(name)).sort();

  // The members an interface keeps: a class's instance members, plus those of each global
  // object declared with that interface as its type (`declare var performance: Performance`).
  const allowed = new Map();
  const allow = (name, members) => {
    const set = allowed.get(name) ?? allowed.set(name, new Set()).get(name);
    for (const m of members) set.add(m);
  };
  for (const name of globals) {
    const info = runtime[name];
    if (info.instance && types.has(name)) allow(name, info.instance);
    if (info.members) {
      for (const { node } of values.get(name)) {
        if (!ts.isVariableStatement(node)) continue;
        const type = node.declarationList.declarations[0].type;
        if (type && ts.isTypeReferenceNode(type) && ts.isIdentifier(type.typeName)) {
          allow(type.typeName.text, info.members);
        }
      }
    }
  }

  const keepMember = (keep, sf) => (member) => {
    const name = memberName(member, sf);
    return name === null || keep.has(name);
  };

  // Walk from the globals to every type they name.
  const chosenValues = new Set(globals);
  const chosenTypes = new Set();
  const queue = [];
  const needType = (name) => {
    if (types.has(name) && !chosenTypes.has(name)) {
      chosenTypes.add(name);
      queue.push(name);
    }
  };
  const refsOfValue = (name) => {
    const refs = new Set();
    for (const { sf, node } of values.get(name)) {
      if (ts.isVariableStatement(node)) {
        const type = node.declarationList.declarations[0].type;
        if (type && ts.isTypeLiteralNode(type)) {
          const keep = new Set(["prototype", ...(runtime[name].static ?? [])]);
          for (const m of type.members.filter(keepMember(keep, sf))) typeRefs(m, refs);
        } else if (type) {
          typeRefs(type, refs);
        }
      } else {
        typeRefs(node, refs);
      }
    }
    return refs;
  };
  for (const name of globals) {
    needType(name);
    for (const ref of refsOfValue(name)) needType(ref);
  }
  while (queue.length > 0) {
    const name = queue.shift();
    if (name in OVERRIDES) {
      const refs = new Set();
      typeRefs(ts.createSourceFile("o.ts", OVERRIDES[name], ts.ScriptTarget.Latest, true), refs);
      for (const ref of refs) needType(ref);
      continue;
    }
    for (const { sf, node } of types.get(name)) {
      const refs = new Set();
      if (ts.isInterfaceDeclaration(node)) {
        for (const clause of node.heritageClauses ?? []) typeRefs(clause, refs);
        for (const p of node.typeParameters ?? []) typeRefs(p, refs);
        const keep = allowed.get(name);
        for (const m of keep ? node.members.filter(keepMember(keep, sf)) : node.members) typeRefs(m, refs);
      } else {
        typeRefs(node, refs);
      }
      for (const ref of refs) needType(ref);
    }
  }

  // Emit in the libs' order, with their comments, under the libs' own notice.
  const notice = files[0].text.match(/^\/\*![\s\S]*?\*\/\n/);
  if (!notice) throw new Error(`${files[0].fileName} has no license notice`);
  const out = [
    `\n// The declarations below are copied from TypeScript's library files, which carry this notice:\n${notice[0]}`,
  ];
  const overridden = new Set();
  for (const sf of files) {
    out.push(`\n// From TypeScript ${ts.version}'s ${sf.fileName}.`);
    for (const node of sf.statements) {
      const text = sf.text;
      if (ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) {
        const name = node.name.text;
        if (!chosenTypes.has(name)) continue;
        if (name in OVERRIDES) {
          if (!overridden.has(name)) out.push(OVERRIDES[name]);
          overridden.add(name);
          continue;
        }
        const keep = ts.isInterfaceDeclaration(node) ? allowed.get(name) : undefined;
        if (!keep) {
          out.push(text.slice(startOf(node, sf), node.end));
          continue;
        }
        const members = node.members.filter(keepMember(keep, sf));
        let body = text.slice(startOf(node, sf), node.members.pos);
        for (const m of members) body += text.slice(m.getFullStart(), m.end);
        body += text.slice(node.members.end, node.end);
        out.push(body);
      } else if (ts.isVariableStatement(node) || ts.isFunctionDeclaration(node)) {
        const name = ts.isFunctionDeclaration(node)
          ? node.name?.text
          : node.declarationList.declarations[0].name.getText(sf);
        if (!chosenValues.has(name)) continue;
        const type = ts.isVariableStatement(node) ? node.declarationList.declarations[0].type : undefined;
        if (type && ts.isTypeLiteralNode(type)) {
          const keep = new Set(["prototype", ...(runtime[name].static ?? [])]);
          const members = type.members.filter(keepMember(keep, sf));
          let body = text.slice(startOf(node, sf), type.members.pos);
          for (const m of members) body += text.slice(m.getFullStart(), m.end);
          body += text.slice(type.members.end, node.end);
          out.push(body);
        } else {
          out.push(text.slice(startOf(node, sf), node.end));
        }
      }
    }
  }
  return out.join("\n") + "\n";
}

/** web/toolhost.d.ts's hand-written part (through MARKER) with `generated` after it. */
export function withGenerated(dts, generated) {
  const at = dts.indexOf(MARKER);
  const head = at === -1 ? dts.trimEnd() + "\n\n" + MARKER : dts.slice(0, at + MARKER.length);
  return head + "\n" + generated;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const surface = JSON.parse(fs.readFileSync(surfacePath, "utf8"));
  const dts = fs.readFileSync(dtsPath, "utf8");
  fs.writeFileSync(dtsPath, withGenerated(dts, generate(surface)));
  console.log(`wrote ${path.relative(root, dtsPath)}`);
}
