-- A local copy of a store's state, kept by applying its `state/patch` notifications in version
-- order; on a gap (a patch whose `from` is not the copy's version) or a patch that does not fit,
-- it fetches the state again with `state/get`.
local patch = require('stateserver.patch')

local Mirror = {}
Mirror.__index = Mirror

--- Subscribes to `store` on `client`; `on_change(state, mirror)` runs after every change.
function Mirror.new(client, store, on_change)
  local self = setmetatable({
    client = client,
    store = store,
    state = nil,
    version = -1,
    loaded = false,
    fetching = false,
    resyncs = 0,
    listeners = {},
  }, Mirror)
  if on_change then
    table.insert(self.listeners, on_change)
  end
  client:on('state/patch', function(params)
    self:_on_patch(params)
  end)
  self:_fetch('state/subscribe')
  return self
end

--- Calls `listener(state, mirror)` after every later change.
function Mirror:on_change(listener)
  table.insert(self.listeners, listener)
end

-- The answer is read in order: every patch written before it is already covered by its state.
function Mirror:_fetch(method)
  self.fetching = true
  self.client:request(method, { store = self.store }, function(err, result)
    self.fetching = false
    if err then
      vim.notify(string.format('stateserver: %s of %s failed: %s', method, self.store,
        require('stateserver.client').describe(err)), vim.log.levels.WARN)
      return
    end
    self.loaded = true
    self.version = result.version
    self.state = result.state
    self:_changed()
  end)
end

function Mirror:_on_patch(params)
  if params.store ~= self.store or (params.path ~= nil and params.path ~= '') then
    return
  end
  if not self.loaded or self.fetching or params.to <= self.version then
    return -- the pending fetch's answer covers it, or it is already reflected
  end
  if params.from ~= self.version then
    return self:resync()
  end
  local ok, state = pcall(patch.apply, self.state, params.patch)
  if not ok then
    return self:resync()
  end
  self.state = state
  self.version = params.to
  self:_changed()
end

--- Fetches the whole state again.
function Mirror:resync()
  self.resyncs = self.resyncs + 1
  self:_fetch('state/get')
end

function Mirror:_changed()
  for _, listener in ipairs(self.listeners) do
    local ok, problem = pcall(listener, self.state, self)
    if not ok then
      vim.notify('stateserver: ' .. tostring(problem), vim.log.levels.ERROR)
    end
  end
end

return Mirror
