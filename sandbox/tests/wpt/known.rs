//! Every case of tests/wpt.rs that fails today, with the reason, and each suite's number of
//! cases: the README's "Web-platform conformance" table is these numbers. A failure is claimed
//! by the first entry that names it or whose rule recognises it; the test fails when a failure
//! is not claimed, a named case passes, or a rule claims a different number of cases than
//! listed here.

pub(crate) struct Suite {
    pub(crate) suite: &'static str,
    pub(crate) total: usize,
    pub(crate) failures: &'static [Known],
}

pub(crate) struct Known {
    pub(crate) why: &'static str,
    pub(crate) cases: Cases,
}

pub(crate) enum Cases {
    /// These cases, by their WPT name.
    Named(&'static [&'static str]),
    /// The failures `rule` recognises from the case's name and its first failed assertion, and
    /// exactly `count` of them: used where hundreds fail for one reason the rule can check.
    Matching {
        rule: fn(&str, &str) -> bool,
        count: usize,
    },
}

/// The url crate's own tests/expected_failures.txt lists each of these: its parser (the one
/// deno_web's `URL` calls) predates the URL Standard's 2023 rules for file: hosts and for empty
/// path segments after `file://`.
const URL_CRATE: &str = "the url crate's parser, which deno_web's URL uses, predates the URL \
    Standard's rules for file: hosts and empty path segments; listed in that crate's own \
    tests/expected_failures.txt";

pub(crate) const SUITES: &[Suite] = &[
    Suite {
        suite: "url constructor",
        total: 819,
        failures: &[
            Known {
                why: URL_CRATE,
                cases: Cases::Named(&[
                    "Parsing: </..//localhost//pig> against <file://lion/>",
                    "Parsing: </////mouse> against <file:///elephant>",
                    "Parsing: <////one/two> against <file:///>",
                    "Parsing: <//localhost//pig> against <file://lion/>",
                    "Parsing: </> against <file://h/C:/a/b>",
                    "Parsing: </C:/> against <file://host/>",
                    "Parsing: </c:/foo/bar> against <file://host/path>",
                    "Parsing: <C|#> against <file://host/dir/file>",
                    "Parsing: <C|/> against <file://host/>",
                    "Parsing: <C|/> against <file://host/dir/file>",
                    "Parsing: <C|> against <file://host/D:/dir1/dir2/file>",
                    "Parsing: <C|> against <file://host/dir/file>",
                    "Parsing: <C|?> against <file://host/dir/file>",
                    "Parsing: <C|\\u{5c}> against <file://host/dir/file>",
                    "Parsing: <C|\\u{a}/> against <file://host/dir/file>",
                    "Parsing: <\\u{5c}/localhost//pig> against <file://lion/>",
                    "Parsing: <file:.//p> without base",
                    "Parsing: <file:/.//p> without base",
                    "Parsing: <file:///.//> against <file:////>",
                    "Parsing: <file:////foo> without base",
                    "Parsing: <file:////one/two> against <file:///>",
                    "Parsing: <file://1.2.3.4/C:/> without base",
                    "Parsing: <file://[1::8]/C:/> without base",
                    "Parsing: <file://\\u{5c}/localhost//cat> without base",
                    "Parsing: <file://example.net/C:/> without base",
                    "Parsing: <file://localhost////foo> without base",
                    "Parsing: <file://localhost//a//../..//> without base",
                    "Parsing: <file://localhost//a//../..//foo> without base",
                    "Parsing: <file://spider///> without base",
                    "Parsing: <file:/C:/> against <file://host/>",
                    "Parsing: <file:C:/> against <file://host/>",
                    "Parsing: <file:\\u{5c}\\u{5c}//> without base",
                    "Parsing: <file:\\u{5c}\\u{5c}\\u{5c}\\u{5c}#guppy> without base",
                    "Parsing: <file:\\u{5c}\\u{5c}\\u{5c}\\u{5c}> without base",
                    "Parsing: <file:\\u{5c}\\u{5c}\\u{5c}\\u{5c}?fox> without base",
                    "Parsing: <file:\\u{5c}\\u{5c}localhost//> without base",
                ]),
            },
            Known {
                why: "deno_web's `host` getter (00_url.js) slices the serialization from the \
                    host's start to the path's, which takes in the `/.` the parser puts before a \
                    path that starts with `//` when there is no host (\"/.\" instead of \"\")",
                cases: Cases::Named(&[
                    "Parsing: <..//path> against <non-spec:/p>",
                    "Parsing: </..//path> against <non-spec:/p>",
                    "Parsing: </.//path> against <non-spec:/p>",
                    "Parsing: <> against <non-spec:/..//p>",
                    "Parsing: <a/..//path> against <non-spec:/p>",
                    "Parsing: <non-spec:/..//> without base",
                    "Parsing: <non-spec:/..//path> without base",
                    "Parsing: <non-spec:/.//> without base",
                    "Parsing: <non-spec:/.//path> without base",
                    "Parsing: <non-spec:/a/..//> without base",
                    "Parsing: <non-spec:/a/..//path> without base",
                    "Parsing: <path> against <non-spec:/..//p>",
                ]),
            },
        ],
    },
    Suite {
        suite: "url origin",
        total: 363,
        failures: &[Known {
            why: "deno_web's `origin` getter (00_url.js) gives a blob: URL its inner URL's origin \
                whatever the scheme; the URL Standard does so for http: and https: only, any \
                other is an opaque origin (\"null\")",
            cases: Cases::Named(&[
            "Origin parsing: <blob:blob:https://example.org/> without base",
            "Origin parsing: <blob:ftp://host/path> without base",
            "Origin parsing: <blob:ws://example.org/> without base",
            "Origin parsing: <blob:wss://example.org/> without base",
            ]),
        }],
    },
    Suite {
        suite: "url setters",
        total: 254,
        failures: &[Known {
            why: URL_CRATE,
            cases: Cases::Named(&[
            "URL: Setting <file:///unicorn>.pathname = '//\\u{5c}/' File URLs and (back)slashes",
            "URL: Setting <file:///unicorn>.pathname = '//monkey/..//' File URLs and (back)slashes",
            "URL: Setting <file://monkey/>.pathname = '\\u{5c}\\u{5c}' File URLs and (back)slashes",
            "URL: Setting <foo:///some/path>.pathname = '' Non-special URLs with an empty host can have their paths erased",
            "URL: Setting <non-spec:/.//>.pathname = 'p' Drop /. from path",
            "URL: Setting <non-spec:/.//p>.hostname = ''",
            "URL: Setting <non-spec:/.//p>.hostname = 'h' Drop /. from path",
            "URL: Setting <non-spec:/>.pathname = '/..//p'",
            "URL: Setting <non-spec:/>.pathname = '/.//p' Serialize /. in path",
            "URL: Setting <non-spec:/>.pathname = '//p'",
            ]),
        }],
    },
    Suite {
        suite: "base64 (atob)",
        total: 80,
        failures: &[],
    },
    Suite {
        suite: "mime types (Blob/File)",
        total: 74,
        failures: &[BLOB_TYPE],
    },
    Suite {
        suite: "generated mime types (Blob/File)",
        total: 881,
        failures: &[Known {
            cases: Cases::Matching {
                rule: blob_type_follows_the_file_api,
                count: 545,
            },
            ..BLOB_TYPE
        }],
    },
    Suite {
        suite: "mime types (Request/Response)",
        total: 74,
        failures: &[
            Known {
                cases: Cases::Matching {
                    rule: body_blob_type_went_through_the_blob_constructor,
                    count: 7,
                },
                ..BODY_BLOB
            },
            Known {
                cases: Cases::Matching {
                    rule: header_value_not_a_byte_string,
                    count: 2,
                },
                ..NOT_A_BYTE_STRING
            },
            Known {
                cases: Cases::Matching {
                    rule: header_value_with_a_line_break,
                    count: 2,
                },
                ..LINE_BREAK
            },
            Known {
                why: "deno_web's MIME type parser (01_mimesniff.js) drops a quoted empty \
                    parameter value (its pattern for quoted-string code points needs one or \
                    more), so a later `charset` takes the place of `charset=\"\"`",
                cases: Cases::Named(&[
                    "text/html;charset=\\u{22}\\u{22};charset=GBK (Request/Response)",
                ]),
            },
        ],
    },
    Suite {
        suite: "generated mime types (Request/Response)",
        total: 881,
        failures: &[
            Known {
                cases: Cases::Matching {
                    rule: body_blob_type_went_through_the_blob_constructor,
                    count: 256,
                },
                ..BODY_BLOB
            },
            Known {
                cases: Cases::Matching {
                    rule: header_value_with_a_line_break,
                    count: 11,
                },
                ..LINE_BREAK
            },
            Known {
                why: "a comma outside quotes splits a header value in two (Fetch's \"get, \
                    decode, and split\"), so Content-Type holds two values and the second does \
                    not parse; the expectation is the value parsed whole, as for a Blob",
                cases: Cases::Named(&[
                    "x/x;,=x;bonus=x (Request/Response)",
                    "x/x;x=,;bonus=x (Request/Response)",
                ]),
            },
        ],
    },
    Suite {
        suite: "hmac (Wycheproof)",
        total: 692,
        failures: &[],
    },
    Suite {
        suite: "ecdsa p-256 sha-256 p1363 (Wycheproof)",
        total: 262,
        failures: &[],
    },
    Suite {
        suite: "ed25519 (Wycheproof)",
        total: 151,
        failures: &[],
    },
];

const BLOB_TYPE: Known = Known {
    why: "a Blob's and File's `type` is what the File API says: the given type lowercased, or \
        \"\" when it holds a code point outside U+0020 to U+007E; WPT expects it parsed as a \
        MIME type, which the File API does not ask for (deno_web 09_file.js)",
    cases: Cases::Matching {
        rule: blob_type_follows_the_file_api,
        count: 57,
    },
};

const BODY_BLOB: Known = Known {
    why: "`blob()` of a Request or Response makes its Blob with the Blob constructor \
        (deno_fetch 22_body.js), which lowercases the serialized MIME type or empties it \
        (File API); Fetch gives the Blob the serialized type as it is",
    cases: Cases::Named(&[]),
};

const NOT_A_BYTE_STRING: Known = Known {
    why: "a header value with a code point above U+00FF is not a ByteString, so building the \
        Headers throws a TypeError, as Fetch and WebIDL say",
    cases: Cases::Named(&[]),
};

const LINE_BREAK: Known = Known {
    why: "a header value with CR or LF inside (not at its ends) is invalid, so building the \
        Headers throws a TypeError, as Fetch says",
    cases: Cases::Named(&[]),
};

/// `"…"` in an assertion message or a name as the harness writes it (tests/wpt/harness.js):
/// printable ASCII as it is, every other UTF-16 code unit as `\u{hex}`. The code units.
fn code_units(escaped: &str) -> Vec<u32> {
    let mut units = Vec::new();
    let mut rest = escaped;
    while let Some(c) = rest.chars().next() {
        if let Some(hex) = rest.strip_prefix("\\u{") {
            let end = hex.find('}').expect("closed escape");
            units.push(u32::from_str_radix(&hex[..end], 16).expect("hex escape"));
            rest = &hex[end + 1..];
        } else {
            units.push(c as u32);
            rest = &rest[c.len_utf8()..];
        }
    }
    units
}

/// A Blob's `type` for the given one, by the File API.
fn file_api_type(given: &[u32]) -> Vec<u32> {
    if given.iter().any(|u| !(0x20..0x7f).contains(u)) {
        return Vec::new();
    }
    given
        .iter()
        .map(|u| match char::from_u32(*u) {
            Some(c) => c.to_ascii_lowercase() as u32,
            None => *u,
        })
        .collect()
}

/// `<what>: got "<got>", expected "<expected>"`: the two values.
fn got_expected<'a>(detail: &'a str, what: &str) -> Option<(&'a str, &'a str)> {
    let rest = detail.strip_prefix(what)?.strip_prefix(": got \"")?;
    let (got, expected) = rest.split_once("\", expected \"")?;
    Some((got, expected.strip_suffix('"')?))
}

/// The Blob's type is the File API's for the given type (the case's input).
fn blob_type_follows_the_file_api(name: &str, detail: &str) -> bool {
    let (Some(input), Some((got, _))) = (
        name.strip_suffix(" (Blob/File)"),
        got_expected(detail, "Blob"),
    ) else {
        return false;
    };
    code_units(got) == file_api_type(&code_units(input))
}

/// The body's Blob has the right type, lowercased or emptied as the Blob constructor does.
fn body_blob_type_went_through_the_blob_constructor(_: &str, detail: &str) -> bool {
    got_expected(detail, "Request")
        .is_some_and(|(got, expected)| code_units(got) == file_api_type(&code_units(expected)))
}

fn header_value_not_a_byte_string(_: &str, detail: &str) -> bool {
    detail.starts_with("threw \"TypeError\"") && detail.ends_with("is not a valid ByteString\"")
}

fn header_value_with_a_line_break(_: &str, detail: &str) -> bool {
    detail.starts_with("threw \"TypeError\": \"Invalid header value: ")
}
