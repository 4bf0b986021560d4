-- Frames the server's stdout into lines. `jobstart` hands over chunks as a list whose first item
-- continues the last chunk's unfinished line and whose last item is the new unfinished line
-- ('' when the chunk ended on a newline; `{''}` alone is the end of the stream). A pure object,
-- so partial chunks are tested without a process.
local Framer = {}
Framer.__index = Framer

--- A framer with nothing pending.
function Framer.new()
  return setmetatable({ partial = '' }, Framer)
end

--- Feeds one `on_stdout` data list; returns the lines it completes, in order, without '\r'.
function Framer:feed(data)
  local lines = {}
  if #data == 0 then
    return lines
  end
  local first = self.partial .. data[1]
  if #data == 1 then
    self.partial = first
    return lines
  end
  table.insert(lines, first)
  for i = 2, #data - 1 do
    table.insert(lines, data[i])
  end
  self.partial = data[#data]
  for i, line in ipairs(lines) do
    lines[i] = line:gsub('\r$', '')
  end
  return lines
end

--- The end of the stream: the last line when it had no newline, else nil.
function Framer:finish()
  local last = self.partial
  self.partial = ''
  if last == '' then
    return nil
  end
  return (last:gsub('\r$', ''))
end

return Framer
