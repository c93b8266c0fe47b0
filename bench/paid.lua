-- wrk script: POST with a distinct x402 PAYMENT-SIGNATURE per request.
-- Usage: wrk -t T -c C -d D -s bench/paid.lua URL -- HEADERS_FILE T
-- Thread i spends lines i, i+T, i+2T, … of HEADERS_FILE (one base64 payment per line).
local counter = 0
local threads_made = 0

function setup(thread)
  thread:set("id", threads_made)
  threads_made = threads_made + 1
end

function init(args)
  local file, threads = args[1], tonumber(args[2])
  payments = {}
  local i = 0
  for line in io.lines(file) do
    if i % threads == id then
      payments[#payments + 1] = line
    end
    i = i + 1
  end
  wrk.method = "POST"
  wrk.body = '{"bench":true}'
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  counter = counter + 1
  local payment = payments[counter]
  if payment == nil then
    -- Out of fresh payments: replays would be refused (402) and show as non-2xx.
    payment = payments[#payments]
  end
  wrk.headers["PAYMENT-SIGNATURE"] = payment
  return wrk.format()
end
