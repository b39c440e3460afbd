-- wrk -s bench/wrk/publish.lua: POST /sw/signals, 64 identities (bench-agent-<n>-token) taken in turn,
-- every request built once in init() so the client spends nothing per request but the send.
-- wrk itself counts answers other than 2xx/3xx ("Non-2xx or 3xx responses").
local requests = {}
local n = 0

function init(args)
  local identities = tonumber(args[1] or "64")
  for i = 0, identities - 1 do
    local body = string.format('{"$type":"broadcast","$tags":["bench","w%d"],"text":"a benchmark signal from worker %d","n":%d}', i % 8, i, i)
    requests[i + 1] = wrk.format("POST", "/sw/signals", {
      ["Authorization"] = "Bearer bench-agent-" .. i .. "-token",
      ["Content-Type"] = "application/json",
    }, body)
  end
end

function request()
  n = n + 1
  return requests[(n % #requests) + 1]
end
