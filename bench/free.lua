-- wrk script: the same POST as paid.lua, without payment (free endpoint, still a signed receipt).
wrk.method = "POST"
wrk.body = '{"bench":true}'
wrk.headers["Content-Type"] = "application/json"
