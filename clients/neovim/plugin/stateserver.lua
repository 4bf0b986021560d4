-- stateserver: the commands exist at start-up; the server starts on first use.
if vim.g.loaded_stateserver then
  return
end
vim.g.loaded_stateserver = true
require('stateserver.commands').create()
