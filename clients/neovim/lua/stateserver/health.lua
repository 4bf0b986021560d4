-- :checkhealth stateserver: the editor, the binary, and a short session with it.
local M = {}

-- Neovim 0.7 reports through health#report_*; 0.8+ has vim.health (0.10 renamed its functions).
local function reporter()
  local h = vim.health or {}
  local function pick(new, old, legacy)
    return h[new] or h[old] or function(...)
      vim.fn['health#' .. legacy](...)
    end
  end
  return {
    start = pick('start', 'report_start', 'report_start'),
    ok = pick('ok', 'report_ok', 'report_ok'),
    warn = pick('warn', 'report_warn', 'report_warn'),
    error = pick('error', 'report_error', 'report_error'),
    info = pick('info', 'report_info', 'report_info'),
  }
end

function M.check()
  local report = reporter()
  local stateserver = require('stateserver')
  report.start('stateserver')
  if vim.fn.has('nvim-0.7') == 1 then
    report.ok('Neovim 0.7 or newer (jobstart, vim.json)')
  else
    report.error('Neovim 0.7 or newer is needed')
  end
  local cmd = stateserver.command()
  local binary = vim.fn.exepath(cmd[1])
  if binary == '' then
    report.error(string.format("'%s' is not an executable on PATH", cmd[1]),
      { 'make install (puts stateserver in ~/.local/bin)', 'or setup({ cmd = { "/path/to/stateserver" } })' })
    return
  end
  report.ok('binary: ' .. binary)
  local probe = { binary, '--ephemeral' }
  local request = vim.json.encode({ jsonrpc = '2.0', id = 1, method = 'initialize',
    params = vim.empty_dict() })
  local output = vim.fn.system(probe, request .. '\n')
  if vim.v.shell_error ~= 0 then
    report.error(string.format('%s exited with %d: %s', table.concat(probe, ' '),
      vim.v.shell_error, output))
    return
  end
  local ok, answer = pcall(vim.json.decode, vim.split(output, '\n', { trimempty = true })[1] or '')
  if not ok or type(answer) ~= 'table' or type(answer.result) ~= 'table' then
    report.error('initialize got no answer: ' .. output)
    return
  end
  local result = answer.result
  local server = type(result.server) == 'table' and result.server or {}
  report.ok(string.format('initialize answered: %s %s', tostring(server.name),
    tostring(server.version)))
  local has_notes = false
  for _, feature in ipairs(result.features or {}) do
    local name = type(feature) == 'table' and feature.name or feature
    has_notes = has_notes or name == 'notes'
  end
  if has_notes then
    report.ok('the notes feature is served')
  else
    report.warn('this server has no notes feature: the notes buffer will stay empty')
  end
  local client = stateserver.client
  if client and not client.exited then
    report.info(string.format('running: %s (job %d)', table.concat(client.cmd, ' '), client.job))
  else
    report.info('not running (it starts with :StateserverNotes)')
  end
end

return M
