-- One stateserver process, spawned with `jobstart`: JSON-RPC requests matched to responses by
-- id, notifications to handlers, stderr's tail kept for error messages. Callbacks run on the
-- main loop in the order the server wrote its lines.
local Framer = require('stateserver.framer')

local Client = {}
Client.__index = Client

local STDERR_LINES = 200

--- Starts `cmd` (a list: the binary and its arguments). Raises when it cannot start.
function Client.spawn(cmd)
  local self = setmetatable({
    cmd = cmd,
    next_id = 1,
    pending = {}, -- id -> callback(err, result)
    handlers = {}, -- method -> list of function(params)
    framer = Framer.new(),
    stderr = {},
    exited = false,
    exit_code = nil,
    failure = nil, -- why the conversation is over
  }, Client)
  local ok, job = pcall(vim.fn.jobstart, cmd, {
    on_stdout = function(_, data)
      for _, line in ipairs(self.framer:feed(data)) do
        self:_receive(line)
      end
    end,
    on_stderr = function(_, data)
      for _, line in ipairs(data) do
        if line ~= '' then
          table.insert(self.stderr, line)
        end
      end
      while #self.stderr > STDERR_LINES do
        table.remove(self.stderr, 1)
      end
    end,
    on_exit = function(_, code)
      local last = self.framer:finish()
      if last then
        self:_receive(last)
      end
      self.exit_code = code
      self:_end(string.format('stateserver exited with code %d', code))
    end,
  })
  if not ok or job <= 0 then
    error(string.format('cannot start %s: %s', table.concat(cmd, ' '),
      ok and (job == -1 and 'not executable' or 'invalid arguments') or tostring(job)), 0)
  end
  self.job = job
  return self
end

--- The last lines the server wrote on stderr.
function Client:stderr_tail(count)
  count = count or 5
  return table.concat(self.stderr, '\n', math.max(1, #self.stderr - count + 1))
end

--- Calls `handler(params)` for every notification of `method` (`state/patch`, `store/event`).
function Client:on(method, handler)
  self.handlers[method] = self.handlers[method] or {}
  table.insert(self.handlers[method], handler)
end

function Client:_send(message)
  if self.exited then
    return false
  end
  vim.fn.chansend(self.job, vim.json.encode(message) .. '\n')
  return true
end

--- Sends a request; `callback(err, result)` runs when the answer is read. `err` is the
--- server's error object (`code`, `message`, `data`) or `{message = ...}` when it exited.
function Client:request(method, params, callback)
  local id = self.next_id
  self.next_id = id + 1
  if type(params) == 'table' and next(params) == nil then
    params = vim.empty_dict() -- named params: `{}`, which a plain empty table is not
  end
  local message = { jsonrpc = '2.0', id = id, method = method, params = params }
  if not self:_send(message) then
    callback({ message = self.failure or 'stateserver is not running' }, nil)
    return id
  end
  self.pending[id] = callback
  return id
end

--- Sends a request and waits for its answer (at most `timeout_ms`, default 30 s), keeping the
--- editor's event loop running. Returns the result; raises with the server's message.
function Client:request_sync(method, params, timeout_ms)
  local done, err, result = false, nil, nil
  local id = self:request(method, params, function(e, r)
    done, err, result = true, e, r
  end)
  local timeout = timeout_ms or 30000
  if not vim.wait(timeout, function()
    return done
  end, 5) then
    self.pending[id] = nil
    self:notify('$/cancelRequest', { id = id })
    error(string.format("stateserver did not answer '%s' within %d ms; stderr: %s", method,
      timeout, self:stderr_tail()), 0)
  end
  if err then
    error(Client.describe(err), 0)
  end
  return result
end

--- Sends a notification.
function Client:notify(method, params)
  self:_send({ jsonrpc = '2.0', method = method, params = params })
end

--- A person's reading of an error object.
function Client.describe(err)
  local text = tostring(err.message)
  if type(err.data) == 'table' and err.data.reason then
    text = string.format('%s: %s', text, err.data.reason)
  end
  return text
end

--- Closes stdin: the server drains its effects and exits 0.
function Client:close()
  if not self.exited then
    vim.fn.chanclose(self.job, 'stdin')
  end
end

--- Waits until the process has exited (at most `timeout_ms`); returns its exit code or nil.
function Client:wait_exit(timeout_ms)
  vim.wait(timeout_ms or 30000, function()
    return self.exited
  end, 5)
  return self.exit_code
end

function Client:_receive(line)
  if self.failure or line == '' then
    return
  end
  local ok, message = pcall(vim.json.decode, line)
  if not ok or type(message) ~= 'table' then
    self:_end(string.format('stateserver wrote a line that is not JSON: %s', line:sub(1, 200)))
    return
  end
  local items = vim.tbl_islist(message) and message or { message }
  for _, item in ipairs(items) do
    if type(item.method) == 'string' then
      for _, handler in ipairs(self.handlers[item.method] or {}) do
        local handled, problem = pcall(handler, item.params)
        if not handled then
          vim.notify('stateserver: ' .. tostring(problem), vim.log.levels.ERROR)
        end
      end
    elseif item.id ~= nil and self.pending[item.id] then
      local callback = self.pending[item.id]
      self.pending[item.id] = nil
      local err = item.error
      if err == vim.NIL then
        err = nil
      end
      local handled, problem = pcall(callback, err, item.result)
      if not handled then
        vim.notify('stateserver: ' .. tostring(problem), vim.log.levels.ERROR)
      end
    end
  end
end

function Client:_end(why)
  if self.failure == nil then
    self.failure = why
  end
  if why:match('^stateserver exited') then
    self.exited = true
  end
  local pending = self.pending
  self.pending = {}
  for _, callback in pairs(pending) do
    pcall(callback, { message = self.failure .. '; stderr: ' .. self:stderr_tail() }, nil)
  end
  for _, handler in ipairs(self.handlers['$/exit'] or {}) do
    pcall(handler, { reason = self.failure })
  end
end

return Client
