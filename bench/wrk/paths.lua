-- wrk -s bench/wrk/paths.lua <url> <file>: GETs of the paths in <file> (one a line), each request
-- built once in init(), taken in a random order so no one URL dominates a run.
local reqs = {}

function init(args)
  for line in io.lines(args[1]) do
    if line ~= "" then reqs[#reqs + 1] = wrk.format("GET", line) end
  end
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))
end

function request()
  return reqs[math.random(#reqs)]
end
