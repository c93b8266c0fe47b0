// What the dashboard takes from CodeMirror 6, bundled by scripts/vendor-codemirror.sh into the one
// ES module web/dashboard/vendor/codemirror.js (the page loads nothing from elsewhere).
import { StyleModule } from "style-mod";

// CodeMirror injects its theme through style-mod, which writes a <style> element into a
// document (a CSP nonce would be needed; the dashboard's `style-src 'self'` has none) and uses
// constructed stylesheets (`adoptedStyleSheets`, outside the CSP's reach) only in shadow roots.
// Where the browser supports them on the document too, they are used there: style-mod is given
// a stand-in root without `head` that forwards `adoptedStyleSheets` to the document.
if (typeof document !== "undefined" && Array.isArray(document.adoptedStyleSheets)) {
  const documentRoot = {
    ownerDocument: document,
    get adoptedStyleSheets() { return document.adoptedStyleSheets; },
    set adoptedStyleSheets(sheets) { document.adoptedStyleSheets = sheets; },
  };
  const mount = StyleModule.mount;
  StyleModule.mount = (root, modules, options) =>
    mount(root === document ? documentRoot : root, modules, options);
}

export { EditorView, basicSetup } from "codemirror";
export { Compartment } from "@codemirror/state";
export { keymap } from "@codemirror/view";
export { indentWithTab } from "@codemirror/commands";
export { HighlightStyle, syntaxHighlighting } from "@codemirror/language";
export { tags } from "@lezer/highlight";
export { javascript } from "@codemirror/lang-javascript";
export { json, jsonParseLinter } from "@codemirror/lang-json";
export { linter, lintGutter, setDiagnostics } from "@codemirror/lint";
