/**
 * The mailbox's Lua scripts (see mailbox.ts for the keys and the protocol they keep). Each runs atomically in
 * Redis: one round trip per step of a turn's life.
 */

/**
 * A session's seq and fence counters expire after this long unused, so keys of long-gone conversations do not
 * pile up. Far longer than any lock or interrupt marker (1 day), so a counter never restarts under one; the fence
 * is time-based besides (see NEXT_FENCE), so even a restarted one only grows.
 */
const COUNTER_TTL_S = 30 * 24 * 3600;

// The append of a message. KEYS[5], when given, is a marker (an open clarify question): while it exists the
// message is a steer (its answer), capped by ARGV[4] instead of ARGV[3], and the reply's last item says so.
export const ENQUEUE = `
-- KEYS: seen, mbox, lock, seq, [steer-marker]   ARGV: entry-json-template, seen-ttl, max-len, [steer-max-len]
if redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[2]) == false then return {-1, 0, 0} end
local len = redis.call('LLEN', KEYS[2])
local max = tonumber(ARGV[3])
local steer = 0
if #KEYS >= 5 and redis.call('EXISTS', KEYS[5]) == 1 then
  steer = 1
  max = tonumber(ARGV[4])
end
if max > 0 and len >= max then
  redis.call('DEL', KEYS[1])
  return {-2, len, 0}
end
local seq = redis.call('INCR', KEYS[4])
redis.call('EXPIRE', KEYS[4], ${COUNTER_TTL_S})
local entry = string.gsub(ARGV[1], '"seq":0', '"seq":' .. seq, 1)
redis.call('RPUSH', KEYS[2], entry)
return {seq, len + 1, redis.call('EXISTS', KEYS[3]), entry, steer}
`;

// The next fencing token of a session: the server clock in µs, or one more than the last token if that is larger.
const NEXT_FENCE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
local fence = math.max(now, last + 1)
redis.call('SET', KEYS[2], string.format('%.0f', fence), 'EX', ${COUNTER_TTL_S})
`;

export const ACQUIRE = `
-- KEYS: lock, fence   ARGV: worker-id, ttl-ms
if redis.call('EXISTS', KEYS[1]) == 1 then return {0, redis.call('PTTL', KEYS[1])} end
${NEXT_FENCE}
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. string.format('%.0f', fence), 'PX', ARGV[2])
return {1, string.format('%.0f', fence)}
`;

// A job's first step, in one round trip: nothing to do when the mailbox is empty (its entry was drained by a
// holder: the lock is not even taken); when another worker holds the lock, whether the job's entry still waits
// (by the entry's JSON prefix, as HOLDS); else the lock, a new fence and the head entry.
export const TAKE = `
-- KEYS: lock, fence, mbox   ARGV: worker-id, ttl-ms, entry-prefix
if redis.call('EXISTS', KEYS[1]) == 1 then
  local holds = 0
  local items = redis.call('LRANGE', KEYS[3], 0, -1)
  for i = 1, #items do
    if string.sub(items[i], 1, #ARGV[3]) == ARGV[3] then holds = 1 break end
  end
  return {0, redis.call('PTTL', KEYS[1]), holds}
end
local head = redis.call('LINDEX', KEYS[3], 0)
if not head then return {-1} end
${NEXT_FENCE}
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. string.format('%.0f', fence), 'PX', ARGV[2])
return {1, string.format('%.0f', fence), head}
`;

export const FENCE = `
-- KEYS: (unused), fence
${NEXT_FENCE}
return string.format('%.0f', fence)
`;

export const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;

// Finishes a turn in one round trip, for the lock holder only: removes the head entry (and entries the turn
// absorbed by steering or merging), shortens the redelivery memory of those messages to SEEN_AFTER_DONE_S, and
// releases the lock when nothing is left — atomically with seeing the mailbox empty, as RELEASE_IF_EMPTY does.
// Returns what is left, and the next head when there is one (the holder's next turn needs no read of its own).
export const ACK = `
-- KEYS: lock, mbox, seen keys of the finished messages...   ARGV: token, seen-ttl, head-entry, absorbed entries...
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if redis.call('LINDEX', KEYS[2], 0) == ARGV[3] then redis.call('LPOP', KEYS[2]) end
for i = 4, #ARGV do redis.call('LREM', KEYS[2], 1, ARGV[i]) end
for i = 3, #KEYS do redis.call('EXPIRE', KEYS[i], ARGV[2]) end
local left = redis.call('LLEN', KEYS[2])
if left == 0 then
  redis.call('DEL', KEYS[1])
  return {0}
end
return {left, redis.call('LINDEX', KEYS[2], 0)}
`;

// Whether the session's mailbox still holds the entry with this id and arrival number. An entry's JSON starts
// with its id, session key and seq in that order (see enqueue), so the prefix names it exactly.
export const HOLDS = `
-- KEYS: mbox   ARGV: entry-prefix
local items = redis.call('LRANGE', KEYS[1], 0, -1)
for i = 1, #items do
  if string.sub(items[i], 1, #ARGV[1]) == ARGV[1] then return 1 end
end
return 0
`;

export const RELEASE_IF_EMPTY = `
-- KEYS: lock, mbox   ARGV: token
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if redis.call('LLEN', KEYS[2]) > 0 then return 0 end
redis.call('DEL', KEYS[1])
return 1
`;

export const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

// 1: still the holder and not interrupted by a later message (the reply is not stale); 0: interrupted or stopped
// (the reply is stale for good); -1: not interrupted, but the lock is no longer ours (another worker runs it).
export const CAN_DELIVER = `
-- KEYS: lock, intr, replying   ARGV: token, seq, head seq of the turn now sending its reply ('' when not)
local intr = tonumber(redis.call('GET', KEYS[2]) or '0')
if intr > tonumber(ARGV[2]) then return 0 end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if ARGV[3] ~= '' then redis.call('SET', KEYS[3], ARGV[3], 'EX', 600) end
return 1
`;

// A "queued" acknowledgement is due unless the running turn (the head entry) is already sending its reply: a
// message arriving then is answered next, at once, so "I will answer after the current task" would only confuse.
// At most one per window per session. (The marker names the head by its seq, so one left behind by a crash
// never silences the acknowledgement of a later turn.)
export const MAY_ACKNOWLEDGE = `
-- KEYS: ack, replying, mbox   ARGV: window seconds
local marker = redis.call('GET', KEYS[2])
if marker then
  local head = redis.call('LINDEX', KEYS[3], 0)
  if head then
    local ok, entry = pcall(cjson.decode, head)
    if ok and type(entry) == 'table' and tostring(entry.seq) == marker then return 0 end
  end
end
if redis.call('SET', KEYS[1], '1', 'EX', ARGV[1], 'NX') then return 1 end
return 0
`;

export const MARK_INTERRUPT = `
-- KEYS: intr   ARGV: seq
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > cur then redis.call('SET', KEYS[1], ARGV[1], 'EX', 86400) end
return 1
`;

// /stop: drop pending entries, break the lock whoever holds it (even a hung worker), mark everything so far stale.
// Scheduled tasks' runs that wait (not the one running) are kept: the user stopped their own work, not a reminder.
// (The marker cannot come from user text: inside the JSON of a text every quote is escaped.)
export const STOP = `
-- KEYS: lock, mbox, fence, intr, seq
local held = redis.call('EXISTS', KEYS[1])
local items = redis.call('LRANGE', KEYS[2], held, -1)
local kept = {}
for i = 1, #items do
  if string.find(items[i], '"scheduled":{"id":', 1, true) then table.insert(kept, items[i]) end
end
local pending = redis.call('LLEN', KEYS[2]) - #kept
redis.call('DEL', KEYS[1], KEYS[2])
if #kept > 0 then redis.call('RPUSH', KEYS[2], unpack(kept)) end
local fence = redis.call('INCR', KEYS[3])
redis.call('EXPIRE', KEYS[3], ${COUNTER_TTL_S})

local seq = redis.call('GET', KEYS[5]) or '0'
redis.call('SET', KEYS[4], tostring(tonumber(seq) + 1), 'EX', 86400)
return {held, pending, string.format('%.0f', fence)}
`;
