-- wrk script for bench/soak.sh: a mixed load on one toolhost server. Each thread cycles through
-- MIX (10 requests): free JS (soak-words, no capability), JS with ctx.kv (soak-kv), JS with
-- ctx.files (soak-files), the same two over MCP (`tools/call` on POST /ai/mcp), and one paid
-- call of the native receipt-echo-paid.
-- Usage: wrk -t T -c C -d D -s bench/lib/soak.lua URL -- PAID_MODE PAID_ARG T
--   PAID_MODE x402:   PAID_ARG is a file of fresh PAYMENT-SIGNATURE values (one per line);
--                     thread i spends lines i, i+T, i+2T, … (as bench/paid.lua); once its share
--                     is spent, its paid slots become free JS calls (a replay would be a 402).
--   PAID_MODE credit: PAID_ARG is a developer credit token (X-Developer-Credit header).
--   PAID_MODE none:   no paid calls (those slots are free JS calls).
local threads_made = 0

function setup(thread)
  thread:set("id", threads_made)
  threads_made = threads_made + 1
end

local MIX = { "words", "kv", "files", "words", "mcp-kv", "kv", "files", "mcp-words", "words", "paid" }
local TEXT = "The quick brown fox jumps over the lazy dog while the soak keeps calling the sandbox"

function init(args)
  mode, paid_arg = args[1] or "none", args[2]
  local threads = tonumber(args[3] or "1")
  payments, spent, n = {}, 0, 0
  if mode == "x402" then
    local i = 0
    for line in io.lines(paid_arg) do
      if i % threads == id then
        payments[#payments + 1] = line
      end
      i = i + 1
    end
  end
end

local function json_headers()
  return { ["Content-Type"] = "application/json" }
end

local function tool(slug, body)
  return wrk.format("POST", "/tools/" .. slug, json_headers(), body)
end

local function mcp(name, arguments)
  local headers = json_headers()
  headers["Accept"] = "application/json, text/event-stream"
  headers["MCP-Protocol-Version"] = "2025-11-25"
  local body = string.format(
    '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":%s}}', n, name, arguments)
  return wrk.format("POST", "/ai/mcp", headers, body)
end

local function words()
  return tool("soak-words", string.format('{"text":"%s %d"}', TEXT, n))
end

function request()
  n = n + 1
  local kind = MIX[(n - 1) % #MIX + 1]
  if kind == "words" then
    return words()
  elseif kind == "kv" then
    return tool("soak-kv", string.format('{"n":%d}', n * 7 + id))
  elseif kind == "files" then
    return tool("soak-files", string.format('{"n":%d}', n * 3 + id))
  elseif kind == "mcp-kv" then
    return mcp("soak-kv", string.format('{"n":%d}', n * 5 + id))
  elseif kind == "mcp-words" then
    return mcp("soak-words", string.format('{"text":"%s"}', TEXT))
  end
  -- paid
  if mode == "x402" and spent < #payments then
    spent = spent + 1
    local headers = json_headers()
    headers["PAYMENT-SIGNATURE"] = payments[spent]
    return wrk.format("POST", "/tools/receipt-echo-paid", headers, '{"soak":true}')
  elseif mode == "credit" then
    local headers = json_headers()
    headers["X-Developer-Credit"] = paid_arg
    return wrk.format("POST", "/tools/receipt-echo-paid", headers, '{"soak":true}')
  end
  return words()
end
