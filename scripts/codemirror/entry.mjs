// What the dashboard takes from CodeMirror 6, bundled by scripts/vendor-codemirror.sh into the one
// ES module web/dashboard/vendor/codemirror.js (the page loads nothing from elsewhere).
export { EditorView, basicSetup } from "codemirror";
export { EditorState, Compartment } from "@codemirror/state";
export { keymap } from "@codemirror/view";
export { indentWithTab } from "@codemirror/commands";
export { javascript } from "@codemirror/lang-javascript";
export { json, jsonParseLinter } from "@codemirror/lang-json";
export { linter, lintGutter, setDiagnostics, forceLinting } from "@codemirror/lint";
