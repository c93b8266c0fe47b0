// toolhost js_request_response handler: the sandbox parses the POST body into req.input and
// serializes the returned object as the 200 JSON body.
function words(input) {
  const text = input && typeof input.text === "string" ? input.text : "";
  const trimmed = text.trim();
  return { words: trimmed === "" ? 0 : trimmed.split(/\s+/).length, upper: text.toUpperCase(), input };
}

/** @type {toolhost.Handler} */
export default async function (req, ctx) {
  return words(req.input);
}
