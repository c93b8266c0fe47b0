// toolhost's stand-in for deno_fetch's 22_http_client.js (which builds
// Deno.HttpClient over deno_net's TLS). 23_request.js only needs the
// prototype, to accept `init.client` when it is a Deno.HttpClient; a handler
// has no way to make one, so every `client` option is refused as not being
// a Deno.HttpClient.

(function () {
class HttpClient {
  constructor() {
    throw new TypeError("Illegal constructor");
  }
}

return { HttpClientPrototype: HttpClient.prototype };
})();
