-- stateserver for Neovim: spawns the core, mirrors its stores, and drives the `notes` feature
-- from a buffer. `require('stateserver').setup({ cmd = {...} })`; see clients/neovim/README.md.
local Client = require('stateserver.client')
local Mirror = require('stateserver.mirror')

local M = {}

M.config = {
  -- The server and its arguments; persistent stores (notes) live in its default state dir.
  cmd = nil, -- default: { $STATESERVER_BIN or 'stateserver' }
  args = {},
}

M.client = nil
M.mirrors = {}

--- Configures the plugin (`cmd`: a list, the binary first; `args`: more arguments).
function M.setup(options)
  M.config = vim.tbl_extend('force', M.config, options or {})
  require('stateserver.commands').create()
end

--- The command line that `start` runs.
function M.command()
  local cmd = vim.deepcopy(M.config.cmd or { vim.env.STATESERVER_BIN or 'stateserver' })
  vim.list_extend(cmd, M.config.args or {})
  return cmd
end

--- The running client, started on first use.
function M.start()
  if M.client and not M.client.exited then
    return M.client
  end
  M.client = Client.spawn(M.command())
  M.mirrors = {}
  M.client:on('store/event', function(params)
    local event = params.event or {}
    if event.message then
      vim.notify(string.format('%s: %s', params.store, event.message), vim.log.levels.INFO)
    end
  end)
  M.client:on('$/exit', function()
    vim.schedule(function()
      vim.cmd('redrawstatus!')
    end)
  end)
  return M.client
end

--- Stops the server (it drains, then exits); waits up to `timeout_ms` and returns its code.
function M.stop(timeout_ms)
  local client = M.client
  if not client then
    return nil
  end
  client:close()
  local code = client:wait_exit(timeout_ms)
  M.client, M.mirrors = nil, {}
  return code
end

--- The shared mirror of `store` (subscribed on first use).
function M.mirror(store)
  local client = M.start()
  if not M.mirrors[store] then
    M.mirrors[store] = Mirror.new(client, store)
  end
  return M.mirrors[store]
end

--- Dispatches `action` to `store`; an error is shown with `vim.notify`. `callback(err, result)`
--- is optional.
function M.dispatch(store, action, callback)
  M.start():request('dispatch', { store = store, action = action }, function(err, result)
    if err then
      vim.notify(string.format('stateserver: %s %s refused: %s', store, action.type,
        Client.describe(err)), vim.log.levels.ERROR)
    end
    if callback then
      callback(err, result)
    end
  end)
end

--- A statusline item: how the notes sync stands ('' while the server is not running).
--- `set statusline+=%{v:lua.require'stateserver'.statusline()}`
function M.statusline()
  local mirror = M.client and not M.client.exited and M.mirrors.notes
  if not mirror or not mirror.loaded then
    return ''
  end
  return require('stateserver.notes').sync_summary(mirror.state)
end

return M
