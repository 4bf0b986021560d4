-- RFC 6902 JSON Patch on tables from `vim.json.decode`: objects are tables (an empty one carries
-- `vim.empty_dict()`'s metatable), arrays are lists, null is `vim.NIL`. `apply` changes the
-- document in place and returns it (a whole-document `replace` returns the new value); it raises
-- an error naming the operation when the patch does not fit, and the mirror then resyncs.
local M = {}

--- Splits a JSON Pointer into unescaped tokens (`~1` is '/', `~0` is '~').
function M.parse_pointer(pointer)
  if pointer == '' then
    return {}
  end
  if pointer:sub(1, 1) ~= '/' then
    error(string.format("JSON Pointer %q must start with '/'", pointer), 0)
  end
  local tokens = {}
  for token in (pointer:sub(2) .. '/'):gmatch('([^/]*)/') do
    token = token:gsub('~1', '/'):gsub('~0', '~')
    table.insert(tokens, token)
  end
  return tokens
end

local function is_array(value)
  if type(value) ~= 'table' then
    return false
  end
  if next(value) == nil then
    return getmetatable(value) ~= vim._empty_dict_mt
  end
  return vim.tbl_islist(value)
end

local function copy(value)
  if type(value) ~= 'table' then
    return value
  end
  local result = {}
  for k, v in pairs(value) do
    result[k] = copy(v)
  end
  return setmetatable(result, getmetatable(value))
end

-- The Lua index of an array token; `allow_end` accepts '-' and the length (an append).
local function index_of(array, token, allow_end)
  if token == '-' and allow_end then
    return #array + 1
  end
  if not token:match('^%d+$') or (token:len() > 1 and token:sub(1, 1) == '0') then
    error(string.format('%q is not an array index', token), 0)
  end
  local index = tonumber(token) + 1
  if index > #array + (allow_end and 1 or 0) then
    error(string.format('index %s is past the end of an array of %d', token, #array), 0)
  end
  return index
end

-- The container holding the pointer's target, and the target's last token.
local function parent(document, tokens, pointer)
  local node = document
  for i = 1, #tokens - 1 do
    local token = tokens[i]
    if is_array(node) then
      node = node[index_of(node, token, false)]
    elseif type(node) == 'table' then
      node = node[token]
    else
      node = nil
    end
    if node == nil then
      error(string.format('%s: no value at /%s', pointer, table.concat(tokens, '/', 1, i)), 0)
    end
  end
  if type(node) ~= 'table' then
    error(string.format('%s: the parent is not a container', pointer), 0)
  end
  return node, tokens[#tokens]
end

local function get(document, pointer)
  local tokens = M.parse_pointer(pointer)
  if #tokens == 0 then
    return document
  end
  local container, last = parent(document, tokens, pointer)
  local value
  if is_array(container) then
    value = container[index_of(container, last, false)]
  else
    value = container[last]
  end
  if value == nil then
    error(string.format('%s: no value there', pointer), 0)
  end
  return value
end

local function remove(document, pointer)
  local tokens = M.parse_pointer(pointer)
  if #tokens == 0 then
    error('cannot remove the whole document', 0)
  end
  local container, last = parent(document, tokens, pointer)
  if is_array(container) then
    return table.remove(container, index_of(container, last, false))
  end
  local value = container[last]
  if value == nil then
    error(string.format('%s: no value to remove', pointer), 0)
  end
  container[last] = nil
  if next(container) == nil then
    setmetatable(container, vim._empty_dict_mt) -- still an object, not an empty list
  end
  return value
end

local function add(document, pointer, value)
  local tokens = M.parse_pointer(pointer)
  if #tokens == 0 then
    return value
  end
  local container, last = parent(document, tokens, pointer)
  if is_array(container) then
    table.insert(container, index_of(container, last, true), value)
  else
    container[last] = value
    setmetatable(container, nil)
  end
  return document
end

local function replace(document, pointer, value)
  local tokens = M.parse_pointer(pointer)
  if #tokens == 0 then
    return value
  end
  get(document, pointer) -- the target must exist
  local container, last = parent(document, tokens, pointer)
  if is_array(container) then
    container[index_of(container, last, false)] = value
  else
    container[last] = value
  end
  return document
end

--- Applies `operations` to `document`; returns the new document.
function M.apply(document, operations)
  for i, op in ipairs(operations) do
    local ok, result = pcall(function()
      -- null is vim.NIL, so a nil here is a member that is missing.
      if (op.op == 'add' or op.op == 'replace' or op.op == 'test') and op.value == nil then
        error("missing 'value'", 0)
      end
      if (op.op == 'move' or op.op == 'copy') and type(op.from) ~= 'string' then
        error("missing 'from'", 0)
      end
      if type(op.path) ~= 'string' then
        error("missing 'path'", 0)
      end
      if op.op == 'add' then
        return add(document, op.path, copy(op.value))
      elseif op.op == 'remove' then
        remove(document, op.path)
        return document
      elseif op.op == 'replace' then
        return replace(document, op.path, copy(op.value))
      elseif op.op == 'move' then
        local value = remove(document, op.from)
        return add(document, op.path, value)
      elseif op.op == 'copy' then
        return add(document, op.path, copy(get(document, op.from)))
      elseif op.op == 'test' then
        if not vim.deep_equal(get(document, op.path), op.value) then
          error(string.format('test failed at %s', op.path), 0)
        end
        return document
      end
      error(string.format('unknown op %q', tostring(op.op)), 0)
    end)
    if not ok then
      error(string.format('patch operation %d (%s %s): %s', i - 1, tostring(op.op),
        tostring(op.path), tostring(result)), 0)
    end
    document = result
  end
  return document
end

return M
