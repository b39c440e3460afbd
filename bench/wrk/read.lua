-- wrk -s bench/wrk/read.lua <path>: the same GET over and over (a newest page, a head poll), built once.
local req

function init(args)
  req = wrk.format("GET", args[1] or "/sw/signals")
end

function request()
  return req
end
