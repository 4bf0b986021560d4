-- The notes buffer: the `notes` store listed live (one line per note, its sync status in
-- brackets), with commands and buffer keys to add, edit, delete, sync and resolve conflicts.
-- Every change is an action sent to the core; the buffer only ever shows the mirrored state.
local M = {}

M.BUFFER_NAME = 'stateserver://notes'
M.bufnr = nil
M.line_ids = {} -- buffer line number -> note id
local watching = nil -- the mirror whose changes render the buffer

local LABELS = {
  pendingUpload = 'pending',
  synchronized = 'synced',
  failed = 'failed',
  conflict = 'conflict',
}

local function text_of(value)
  if type(value) ~= 'string' then
    return ''
  end
  return (value:gsub('\n', ' '))
end

--- How the sync stands, in a few words: the statusline item and the buffer's first line.
function M.sync_summary(state)
  if type(state) ~= 'table' then
    return 'notes: loading'
  end
  local sync = type(state.sync) == 'table' and state.sync or {}
  local pending = tonumber(sync.pending) or 0
  local conflicts = 0
  for _, note in ipairs(state.notes or {}) do
    if note.syncStatus == 'conflict' then
      conflicts = conflicts + 1
    end
  end
  if sync.status == 'syncing' then
    return 'notes: syncing'
  elseif conflicts > 0 then
    return string.format('notes: %d conflict%s', conflicts, conflicts == 1 and '' or 's')
  elseif sync.status == 'offline' then
    return string.format('notes: offline, %d pending', pending)
  elseif sync.status == 'failed' then
    return string.format('notes: sync failed, %d pending', pending)
  elseif pending > 0 then
    return string.format('notes: %d pending', pending)
  end
  return 'notes: synced'
end

--- The buffer's lines for a state of the notes store, and the note id of each line.
function M.lines(state)
  local lines, ids = { '# ' .. M.sync_summary(state) }, {}
  if type(state) ~= 'table' then
    return lines, ids
  end
  if type(state.sync) == 'table' and type(state.sync.message) == 'string' then
    table.insert(lines, '# ' .. state.sync.message)
  end
  for _, note in ipairs(state.notes or {}) do
    local line = string.format('%s  [%s]  %s', note.id,
      LABELS[note.syncStatus] or tostring(note.syncStatus), text_of(note.text))
    if note.syncStatus == 'conflict' then
      line = line .. string.format('  (server: %s)', text_of(note.serverText))
    end
    table.insert(lines, line)
    ids[#lines] = note.id
  end
  return lines, ids
end

local function render(state)
  if not M.bufnr or not vim.api.nvim_buf_is_valid(M.bufnr) then
    return
  end
  local lines, ids = M.lines(state)
  M.line_ids = ids
  vim.api.nvim_buf_set_option(M.bufnr, 'modifiable', true)
  vim.api.nvim_buf_set_lines(M.bufnr, 0, -1, false, lines)
  vim.api.nvim_buf_set_option(M.bufnr, 'modifiable', false)
  vim.api.nvim_buf_set_option(M.bufnr, 'modified', false)
  vim.cmd('redrawstatus!')
end

local function map(lhs, rhs, desc)
  vim.keymap.set('n', lhs, rhs, { buffer = M.bufnr, silent = true, desc = desc })
end

local function create_buffer()
  M.bufnr = vim.api.nvim_create_buf(true, true)
  vim.api.nvim_buf_set_name(M.bufnr, M.BUFFER_NAME)
  vim.api.nvim_buf_set_option(M.bufnr, 'buftype', 'nofile')
  vim.api.nvim_buf_set_option(M.bufnr, 'bufhidden', 'hide')
  vim.api.nvim_buf_set_option(M.bufnr, 'swapfile', false)
  vim.api.nvim_buf_set_option(M.bufnr, 'filetype', 'stateserver-notes')
  map('a', function() M.add('') end, 'add a note')
  map('e', function() M.edit('') end, 'edit the note under the cursor')
  map('dd', M.delete, 'delete the note under the cursor')
  map('s', M.sync, 'sync')
  map('rl', function() M.resolve('local') end, 'resolve the conflict: keep the local text')
  map('rs', function() M.resolve('server') end, 'resolve the conflict: keep the server text')
end

--- Opens the notes buffer in the current window (starting the server when needed).
function M.open()
  if not M.bufnr or not vim.api.nvim_buf_is_valid(M.bufnr) then
    create_buffer()
  end
  vim.api.nvim_set_current_buf(M.bufnr)
  local mirror = require('stateserver').mirror('notes')
  if watching ~= mirror then
    watching = mirror
    mirror:on_change(function(state, changed)
      if changed == watching then
        render(state)
      end
    end)
  end
  render(mirror.loaded and mirror.state or nil)
  return M.bufnr
end

local function dispatch(action)
  require('stateserver').dispatch('notes', action)
end

--- The note under the cursor in the notes buffer, or nil with a message.
function M.current()
  if vim.api.nvim_get_current_buf() ~= M.bufnr then
    vim.notify('stateserver: open the notes buffer (:StateserverNotes) first', vim.log.levels.WARN)
    return nil
  end
  local id = M.line_ids[vim.api.nvim_win_get_cursor(0)[1]]
  if not id then
    vim.notify('stateserver: no note on this line', vim.log.levels.WARN)
    return nil
  end
  for _, note in ipairs(watching and watching.state and watching.state.notes or {}) do
    if note.id == id then
      return note
    end
  end
  return nil
end

--- Adds a note (`text`; prompts when it is empty).
function M.add(text)
  if text ~= '' then
    return dispatch({ type = 'add', text = text })
  end
  vim.ui.input({ prompt = 'New note: ' }, function(input)
    if input and input ~= '' then
      dispatch({ type = 'add', text = input })
    end
  end)
end

--- Replaces the text of the note under the cursor (prompts, prefilled, when `text` is empty).
function M.edit(text)
  local note = M.current()
  if not note then
    return
  end
  if text ~= '' then
    return dispatch({ type = 'edit', id = note.id, text = text })
  end
  vim.ui.input({ prompt = 'Edit note: ', default = note.text }, function(input)
    if input and input ~= '' then
      dispatch({ type = 'edit', id = note.id, text = input })
    end
  end)
end

--- Deletes the note under the cursor.
function M.delete()
  local note = M.current()
  if note then
    dispatch({ type = 'delete', id = note.id })
  end
end

--- Uploads pending notes (and finds conflicts).
function M.sync()
  dispatch({ type = 'sync' })
end

--- Resolves the conflict of the note under the cursor, keeping `keep`: 'local' or 'server'.
function M.resolve(keep)
  if keep ~= 'local' and keep ~= 'server' then
    vim.notify(string.format("stateserver: expected 'local' or 'server', got %q", keep),
      vim.log.levels.ERROR)
    return
  end
  local note = M.current()
  if not note then
    return
  end
  if note.syncStatus ~= 'conflict' then
    vim.notify(string.format('stateserver: %s has no conflict', note.id), vim.log.levels.WARN)
    return
  end
  dispatch({ type = 'resolveConflict', id = note.id, keep = keep })
end

return M
