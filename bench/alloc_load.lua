-- bench/alloc_load.lua - wrk's requests for bench/java/AllocServer.java (bench/alloc_server.sh,
-- bench/alloc_start.sh): 1000 orders of different users, items, coupons and queries, in turn.
local reqs, n = {}, 0
local coupons = { "SPRING", "VIP", "NONE", "welcome" }
local queries = { "blue", "lamp", "modern+chair", "steel", "oak+table", "kids", "glass+vase", "copper" }
init = function(args)
  for i = 1, 1000 do
    reqs[i] = wrk.format("GET", string.format("/api/order?user=u%d&items=%d&coupon=%s&q=%s",
      (i * 7919) % 50000, 1 + i % 9, coupons[i % 4 + 1], queries[i % 8 + 1]))
  end
end
request = function() n = n % #reqs + 1; return reqs[n] end
