-- Drives the plugin headless: `nvim --headless -u NONE --cmd 'set rtp^=clients/neovim'
-- -c 'luafile clients/neovim/test/notes_test.lua'` with $STATESERVER_BIN and
-- $STATESERVER_NVIM_OUT (where the results go, as JSON). tests/test_client_neovim.py runs it and
-- checks what it saw; a Lua error ends nvim with status 1 and the traceback in the results.
local out = assert(vim.env.STATESERVER_NVIM_OUT, 'set STATESERVER_NVIM_OUT')
local binary = assert(vim.env.STATESERVER_BIN, 'set STATESERVER_BIN')
local TIMEOUT = 30000 -- a failure bound only

local results, notices = {}, {}
local function record(name, value)
  table.insert(results, { name = name, value = value })
end

local function finish(ok, problem)
  local file = assert(io.open(out, 'w'))
  file:write(vim.json.encode({ ok = ok, error = problem, results = results, notices = notices }))
  file:close()
  vim.cmd(ok and 'qall!' or 'cquit 1')
end

local function lines()
  return vim.api.nvim_buf_get_lines(0, 0, -1, false)
end

local function wait_for(what, condition)
  if not vim.wait(TIMEOUT, condition, 5) then
    error(string.format('waited %d ms for %s; the buffer shows:\n%s', TIMEOUT, what,
      table.concat(lines(), '\n')))
  end
end

local function line_of(text)
  for number, line in ipairs(lines()) do
    if line:find(text, 1, true) then
      return number
    end
  end
  error('no line with ' .. text)
end

local function statusline()
  return vim.api.nvim_eval_statusline(vim.o.statusline, {}).str
end

local function run()
  vim.notify = function(message)
    table.insert(notices, message)
  end
  local answers = {} -- what the "user" types at the next prompts
  vim.ui.input = function(options, callback)
    table.insert(notices, 'prompt: ' .. options.prompt .. (options.default or ''))
    callback(table.remove(answers, 1))
  end
  vim.cmd('runtime plugin/stateserver.lua')
  record('commands', vim.fn.exists(':StateserverNotes') == 2)

  -- Lines framed from partial chunks as jobstart hands them over.
  local framer = require('stateserver.framer').new()
  local framed = {}
  for _, chunk in ipairs({ { '{"a":' }, { '1}', '{"b"' }, { ':2}', '' }, { '{"c":3}\r', 'ta' },
    { 'il' } }) do
    vim.list_extend(framed, framer:feed(chunk))
  end
  table.insert(framed, framer:finish())
  record('framer', framed)

  -- RFC 6902 on decoded JSON, empty objects staying objects.
  local patch = require('stateserver.patch')
  local document = patch.apply(vim.json.decode('{"a":[1,2],"o":{},"e":{"k":1}}'), {
    { op = 'add', path = '/a/-', value = 3 }, { op = 'add', path = '/o/k~1x', value = 'v' },
    { op = 'remove', path = '/a/0' }, { op = 'move', from = '/o/k~1x', path = '/m' },
    { op = 'copy', from = '/a', path = '/c' }, { op = 'replace', path = '/a/0', value = 9 },
    { op = 'test', path = '/c/1', value = 3 }, { op = 'remove', path = '/e/k' } })
  record('patch', vim.json.encode(document))
  local ok, problem = pcall(patch.apply, vim.json.decode('{"a":[]}'),
    { { op = 'remove', path = '/a/5' } })
  record('patch_error', ok and 'applied' or problem)

  -- The json-patch-tests suite, when the shared test data is there.
  local data = vim.env.STATESERVER_TESTDATA
  if data and vim.fn.isdirectory(data .. '/json-patch-tests') == 1 then
    local ran, failures = 0, {}
    for _, file in ipairs({ 'tests.json', 'spec_tests.json' }) do
      local cases = vim.json.decode(table.concat(
        vim.fn.readfile(data .. '/json-patch-tests/' .. file), '\n'))
      for i, case in ipairs(cases) do
        if not case.disabled then
          ran = ran + 1
          local applied, got = pcall(patch.apply, case.doc, case.patch)
          local name = string.format('%s #%d %s', file, i, tostring(case.comment))
          if case.error ~= nil and applied then
            table.insert(failures, name .. ': applied, expected ' .. tostring(case.error))
          elseif case.error == nil and not applied then
            table.insert(failures, name .. ': ' .. tostring(got))
          elseif case.expected ~= nil and not vim.deep_equal(got, case.expected) then
            table.insert(failures, name .. ': got ' .. vim.json.encode(got))
          end
        end
      end
    end
    record('conformance', { ran = ran, failures = failures })
  end

  -- A mirror on a stand-in client: patches in version order, a gap or a misfit resyncs.
  local requests, handlers = {}, {}
  local stand_in = {
    on = function(_, method, handler)
      handlers[method] = handler
    end,
    request = function(_, method, params, callback)
      table.insert(requests, { method = method, callback = callback })
    end,
  }
  local mirror = require('stateserver.mirror').new(stand_in, 'c')
  local function answer(version, state)
    table.remove(requests, 1).callback(nil, { version = version, state = state })
  end
  local function patch_to(from, to, value)
    handlers['state/patch']({ store = 'c', from = from, to = to,
      patch = { { op = 'replace', path = '/n', value = value } } })
  end
  answer(3, { n = 3 })
  patch_to(3, 4, 4)
  patch_to(2, 3, 99) -- already reflected: ignored
  local seen = { mirror.version, mirror.state.n, #requests }
  patch_to(6, 7, 7) -- a gap: fetch again
  table.insert(seen, requests[1] and requests[1].method)
  answer(7, { n = 7 })
  handlers['state/patch']({ store = 'c', from = 7, to = 8,
    patch = { { op = 'remove', path = '/missing' } } }) -- does not fit: fetch again
  table.insert(seen, requests[1] and requests[1].method)
  answer(8, { n = 8 })
  vim.list_extend(seen, { mirror.version, mirror.state.n, mirror.resyncs })
  record('mirror', seen)

  -- The notes buffer against the real core.
  require('stateserver').setup({ cmd = { binary, '--ephemeral', '--latency', '0' } })
  vim.o.statusline = "%{v:lua.require'stateserver'.statusline()}"
  record('statusline_before', statusline())
  vim.cmd('StateserverNotes')
  wait_for('the first state', function()
    return lines()[1] == '# notes: synced'
  end)
  record('empty', lines())
  vim.cmd('StateserverNoteAdd Heron at the pier')
  vim.cmd('StateserverNoteAdd Egret on the mudflat')
  wait_for('two notes', function()
    return #lines() == 3
  end)
  record('added', lines())
  record('statusline_pending', statusline())

  vim.api.nvim_win_set_cursor(0, { line_of('note-1'), 0 })
  vim.cmd('StateserverNoteEdit Grey heron at the pier')
  wait_for('the edit', function()
    return lines()[line_of('note-1')]:find('Grey heron', 1, true) ~= nil
  end)
  vim.cmd('StateserverSync')
  wait_for('the sync', function()
    return lines()[1] == '# notes: synced' and not table.concat(lines()):find('pending')
  end)
  record('synced', lines())
  record('statusline_synced', statusline())

  -- Someone else edits note-1 on the server; our edit then conflicts.
  local client = require('stateserver').client
  client:request_sync('dispatch', { store = 'backend',
    action = { type = 'remoteEdit', noteId = 'note-1', text = 'Egret' } })
  vim.api.nvim_win_set_cursor(0, { line_of('note-1'), 0 })
  vim.cmd('StateserverNoteEdit Grey heron, mine')
  vim.cmd('StateserverSync')
  wait_for('the conflict', function()
    return lines()[1] == '# notes: 1 conflict'
  end)
  record('conflict', lines())
  record('statusline_conflict', statusline())

  -- Resolved with the buffer's key, then synced again.
  vim.api.nvim_win_set_cursor(0, { line_of('note-1'), 0 })
  vim.cmd('normal rl')
  wait_for('the resolution', function()
    return lines()[1] == '# notes: 1 pending'
  end)
  vim.cmd('StateserverSync')
  wait_for('the second sync', function()
    return lines()[1] == '# notes: synced'
  end)
  record('resolved', lines())

  -- Deleted with the buffer's key; a refused action is reported, not thrown.
  vim.api.nvim_win_set_cursor(0, { line_of('note-2'), 0 })
  vim.cmd('normal dd')
  wait_for('the deletion', function()
    return #lines() == 2
  end)
  record('deleted', lines())
  answers = { 'Cormorant' } -- the buffer's `a` prompts for the text
  vim.cmd('normal a')
  wait_for('the prompted note', function()
    return #lines() == 3
  end)
  record('prompted', lines())
  require('stateserver.notes').add(' \t ') -- the core refuses a blank text
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.cmd('StateserverResolve server')
  client:request_sync('state/get', { store = 'notes' }) -- every answer before it has arrived
  record('notices', notices)
  record('resyncs', require('stateserver').mirrors.notes.resyncs)

  vim.cmd('checkhealth stateserver')
  record('health', lines())
  vim.cmd('bwipeout!')

  record('exit', require('stateserver').stop(TIMEOUT))
  record('statusline_after', statusline())
end

local ran, problem = xpcall(run, debug.traceback)
finish(ran, problem)
