// What the area scripts share: a few lines standing in for testharness.js. A test is a name
// and a function (maybe async) that throws at its first failed assertion, as in WPT; `run`
// returns how many ran and each failure's name and first failed assertion. Names and details
// are made printable ASCII (`\u{..}` for anything else) so lone surrogates, which some test
// inputs hold on purpose, survive the trip to Rust as JSON.

const show = (value) => {
    if (typeof value !== "string") {
        return String(value);
    }
    let out = '"';
    for (let i = 0; i < value.length; i++) {
        const code = value.charCodeAt(i);
        out += code >= 0x20 && code < 0x7f && code !== 0x22 && code !== 0x5c
            ? value[i]
            : `\\u{${code.toString(16)}}`;
    }
    return `${out}"`;
};

// A string as it appears in a test's name: printable ASCII as it is, the rest escaped.
const printable = (value) => show(String(value)).slice(1, -1);

class AssertionError extends Error {}

// testharness.js compares with SameValue.
function assert_equals(actual, expected, what) {
    if (!Object.is(actual, expected)) {
        throw new AssertionError(`${what}: got ${show(actual)}, expected ${show(expected)}`);
    }
}

function assert_true(value, what) {
    assert_equals(value, true, what);
}

// As testharness.js: the error's constructor is exactly `constructor` and its name matches.
function assert_throws_js(constructor, fn) {
    try {
        fn();
    } catch (e) {
        if (e === null || typeof e !== "object" || e.constructor !== constructor || e.name !== constructor.name) {
            throw new AssertionError(`threw ${show(e?.name)} (${show(e?.message)}), expected ${constructor.name}`);
        }
        return;
    }
    throw new AssertionError(`did not throw, expected ${constructor.name}`);
}

// As testharness.js: a DOMException of this global, with the name and its legacy code.
const DOM_CODES = { InvalidCharacterError: 5 };
function assert_throws_dom(name, fn) {
    try {
        fn();
    } catch (e) {
        if (e === null || typeof e !== "object" || e.constructor !== DOMException || e.name !== name || e.code !== DOM_CODES[name]) {
            throw new AssertionError(`threw ${show(e?.name)} (code ${e?.code}), expected DOMException ${name}`);
        }
        return;
    }
    throw new AssertionError(`did not throw, expected ${name}`);
}

async function run(tests) {
    const failures = [];
    for (const [name, test] of tests) {
        try {
            await test();
        } catch (e) {
            const detail = e instanceof AssertionError ? e.message : `threw ${show(e?.name)}: ${show(e?.message)}`;
            failures.push([printable(name), detail]);
        }
    }
    return { total: tests.length, failures };
}
