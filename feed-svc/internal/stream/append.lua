-- Appends one event to a stream once: KEYS[1] the stream, KEYS[2] the event's marker.
-- ARGV: event id, event name, data, max length, min id (ms), ttl (s), wake channel, list.
if redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
local pos = redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[4], '*', 'id', ARGV[1], 'event', ARGV[2], 'data', ARGV[3])
redis.call('XTRIM', KEYS[1], 'MINID', ARGV[5])
redis.call('SET', KEYS[2], pos, 'EX', ARGV[6])
redis.call('EXPIRE', KEYS[1], ARGV[6])
redis.call('PUBLISH', ARGV[7], ARGV[8])
return 1
