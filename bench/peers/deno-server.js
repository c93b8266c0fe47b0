// Deno.serve; usage: deno run --allow-net=127.0.0.1 deno-server.js PORT
function words(input) {
  const text = input && typeof input.text === "string" ? input.text : "";
  const trimmed = text.trim();
  return { words: trimmed === "" ? 0 : trimmed.split(/\s+/).length, upper: text.toUpperCase(), input };
}

const port = Number(Deno.args[0]);
Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, async (request) => {
  if (request.method !== "POST") return new Response("not found", { status: 404 });
  let input;
  try {
    input = await request.json();
  } catch {
    return new Response('{"error":"malformed_json"}', { status: 400, headers: { "content-type": "application/json" } });
  }
  return new Response(JSON.stringify(words(input)), { headers: { "content-type": "application/json" } });
});
