-- wrk -s bench/wrk/publish-keyed.lua: as publish.lua (64 identities taken in turn), every publish with an
-- Idempotency-Key of its own, never repeated (the key is new: reserved, then the signal stored under it).
-- Only the key line is made per request; the rest of each request is built once in init().
local heads = {}
local bodies = {}
local n = 0
-- a prefix of its own for each wrk run (the warm-up's keys are not the measured run's): 8 random bytes as hex
local f = io.open("/dev/urandom", "rb")
local run = f:read(8):gsub(".", function(c) return string.format("%02x", c:byte()) end)
f:close()

function init(args)
  local identities = tonumber(args[1] or "64")
  for i = 0, identities - 1 do
    bodies[i + 1] = string.format('{"$type":"broadcast","$tags":["bench","w%d"],"text":"a benchmark signal from worker %d","n":%d}', i % 8, i, i)
    heads[i + 1] = "POST /sw/signals HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer bench-agent-" .. i ..
      "-token\r\nContent-Type: application/json\r\nContent-Length: " .. #bodies[i + 1] .. "\r\n"
  end
end

function request()
  n = n + 1
  local i = (n % #heads) + 1
  return heads[i] .. "Idempotency-Key: bench-" .. run .. "-" .. n .. "\r\n\r\n" .. bodies[i]
end
