// WPT's mimesniff/mime-types/parsing.any.js over its data files (mimesniff/mime-types/resources/
// mime-types.json and generated-mime-types.json, as the `data-url` crate ships them): a MIME
// type given as a Blob's or File's `type`, and as the Content-Type of a Request and a Response
// whose body is read as a Blob, must come out parsed and serialized (or "" when it does not
// parse).

function tests(cases) {
    const out = { blob: [], body: [] };
    for (const val of cases) {
        if (typeof val === "string") {
            continue;
        }
        const output = val.output === null ? "" : val.output;
        out.blob.push([`${val.input} (Blob/File)`, () => {
            assert_equals(new Blob([], { type: val.input }).type, output, "Blob");
            assert_equals(new File([], "noname", { type: val.input }).type, output, "File");
        }]);
        out.body.push([`${val.input} (Request/Response)`, () => Promise.all([
            new Request("about:blank", { headers: [["Content-Type", val.input]] }).blob()
                .then((blob) => assert_equals(blob.type, output, "Request")),
            new Response(null, { headers: [["Content-Type", val.input]] }).blob()
                .then((blob) => assert_equals(blob.type, output, "Response")),
        ])]);
    }
    return out;
}

export default async function (req) {
    const listed = tests(JSON.parse(req.input.mimeTypes));
    const generated = tests(JSON.parse(req.input.generatedMimeTypes));
    return {
        "mime types (Blob/File)": await run(listed.blob),
        "mime types (Request/Response)": await run(listed.body),
        "generated mime types (Blob/File)": await run(generated.blob),
        "generated mime types (Request/Response)": await run(generated.body),
    };
}
