// toolhost runtime glue: ctx.files. Paired with sandbox/src/ops/files.rs,
// which checks the `files` capability and normalizes every path (no `..`, no
// absolute paths, no backslashes, no control characters).

"use strict";

((globalThis) => {
  const { core, primordials, toolhost } = globalThis.__bootstrap;
  const { op_files_delete, op_files_list, op_files_read, op_files_write } = core.ops;
  const { errorMessage, toJsonText } = toolhost;
  const { JSONParse, ObjectFreeze, SyntaxError, TypeError } = primordials;

  function pathArg(path, what) {
    if (typeof path !== "string") {
      throw new TypeError(`ctx.files.${what}: path must be a string`);
    }
    return path;
  }

  function createFiles() {
    return ObjectFreeze({
      // The file as UTF-8 text, or null when it does not exist.
      async read(path) {
        return await op_files_read(pathArg(path, "read"));
      },
      // The file parsed as JSON, or null when it does not exist.
      async readJson(path) {
        const text = await op_files_read(pathArg(path, "readJson"));
        if (text === null) {
          return null;
        }
        try {
          return JSONParse(text);
        } catch (err) {
          throw new SyntaxError(`ctx.files.readJson: ${path}: ${errorMessage(err)}`);
        }
      },
      // Writes a string as-is, anything else as JSON.
      async write(path, data) {
        const text = typeof data === "string" ? data : toJsonText(data, "ctx.files.write data");
        await op_files_write(pathArg(path, "write"), text);
      },
      // [{ path, size }] of the files under `prefix` (all files when omitted).
      async list(prefix) {
        return await op_files_list(prefix === undefined ? "" : pathArg(prefix, "list"));
      },
      // true when the file existed.
      async delete(path) {
        return await op_files_delete(pathArg(path, "delete"));
      },
    });
  }

  toolhost.createFiles = createFiles;
})(globalThis);
