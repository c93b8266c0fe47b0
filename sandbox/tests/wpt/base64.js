// WPT's html/webappapis/atob/base64.any.js over the data file it loads
// (fetch/data-urls/resources/base64.json, forgiving-base64, as the `data-url` crate ships it):
// `atob` must give these code units, or throw an InvalidCharacterError DOMException where the
// expected output is null. WPT checks the code units only; the length is checked here too.

export default async function (req) {
    const cases = JSON.parse(req.input.base64);
    return {
        "base64 (atob)": await run(cases.map(([input, output]) => [`atob(${input})`, () => {
            if (output === null) {
                assert_throws_dom("InvalidCharacterError", () => atob(input));
                return;
            }
            const result = atob(input);
            for (let i = 0; i < output.length; i++) {
                assert_equals(result.charCodeAt(i), output[i], `code unit ${i}`);
            }
            assert_equals(result.length, output.length, "length");
        }])),
    };
}
