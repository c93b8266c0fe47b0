// WPT's url/url-constructor.any.js, url/url-origin.any.js and url/url-setters.any.js, over the
// data files they load (url/resources/urltestdata.json and setters_tests.json, as the `url`
// crate ships them): the same checks in the same order, under the same test names.

const against = (base) => (base ? `against <${base}>` : "without base");

function constructorTests(cases) {
    return cases.filter((c) => typeof c !== "string").map((expected) => {
        const base = expected.base !== null ? expected.base : undefined;
        return [`Parsing: <${expected.input}> ${against(base)}`, () => {
            if (expected.failure) {
                assert_throws_js(TypeError, () => new URL(expected.input, base));
                return;
            }
            const url = new URL(expected.input, base);
            for (const key of ["href", "protocol", "username", "password", "host", "hostname", "port", "pathname", "search"]) {
                assert_equals(url[key], expected[key], key);
            }
            if ("searchParams" in expected) {
                assert_true("searchParams" in url, "searchParams in url");
                assert_equals(url.searchParams.toString(), expected.searchParams, "searchParams");
            }
            assert_equals(url.hash, expected.hash, "hash");
        }];
    });
}

function originTests(cases) {
    return cases.filter((c) => typeof c !== "string" && "origin" in c).map((expected) => {
        const base = expected.base !== null ? expected.base : undefined;
        return [`Origin parsing: <${expected.input}> ${against(base)}`, () => {
            const url = new URL(expected.input, base);
            assert_equals(url.origin, expected.origin, "origin");
        }];
    });
}

function setterTests(all) {
    const tests = [];
    for (const attribute of Object.keys(all)) {
        if (attribute === "comment") {
            continue;
        }
        for (const c of all[attribute]) {
            let name = `URL: Setting <${c.href}>.${attribute} = '${c.new_value}'`;
            if ("comment" in c) {
                name += ` ${c.comment}`;
            }
            tests.push([name, () => {
                const url = new URL(c.href);
                url[attribute] = c.new_value;
                for (const key in c.expected) {
                    assert_equals(url[key], c.expected[key], key);
                }
            }]);
        }
    }
    return tests;
}

export default async function (req) {
    const urltestdata = JSON.parse(req.input.urltestdata);
    const setters = JSON.parse(req.input.setters);
    return {
        "url constructor": await run(constructorTests(urltestdata)),
        "url origin": await run(originTests(urltestdata)),
        "url setters": await run(setterTests(setters)),
    };
}
