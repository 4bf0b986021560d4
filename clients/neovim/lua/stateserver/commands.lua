-- The user commands; `plugin/stateserver.lua` creates them at start-up, `setup` again.
local M = {}

local function notes()
  return require('stateserver.notes')
end

function M.create()
  local create = vim.api.nvim_create_user_command
  create('StateserverNotes', function()
    notes().open()
  end, { desc = 'stateserver: list the notes store in a live buffer' })
  create('StateserverNoteAdd', function(args)
    notes().add(args.args)
  end, { nargs = '*', desc = 'stateserver: add a note (prompts without text)' })
  create('StateserverNoteEdit', function(args)
    notes().edit(args.args)
  end, { nargs = '*', desc = 'stateserver: edit the note under the cursor' })
  create('StateserverNoteDelete', function()
    notes().delete()
  end, { desc = 'stateserver: delete the note under the cursor' })
  create('StateserverSync', function()
    notes().sync()
  end, { desc = 'stateserver: sync the notes with the server' })
  create('StateserverResolve', function(args)
    notes().resolve(args.args)
  end, {
    nargs = 1,
    complete = function()
      return { 'local', 'server' }
    end,
    desc = 'stateserver: resolve the conflict under the cursor, keeping local or server text',
  })
  create('StateserverStop', function()
    require('stateserver').stop()
  end, { desc = 'stateserver: stop the server' })
end

return M
