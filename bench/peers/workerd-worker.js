// workerd ES-module worker.
function words(input) {
  const text = input && typeof input.text === "string" ? input.text : "";
  const trimmed = text.trim();
  return { words: trimmed === "" ? 0 : trimmed.split(/\s+/).length, upper: text.toUpperCase(), input };
}

export default {
  async fetch(request) {
    if (request.method !== "POST") return new Response("not found", { status: 404 });
    let input;
    try {
      input = await request.json();
    } catch {
      return new Response('{"error":"malformed_json"}', { status: 400, headers: { "content-type": "application/json" } });
    }
    return new Response(JSON.stringify(words(input)), { headers: { "content-type": "application/json" } });
  },
};
