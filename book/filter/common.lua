-- common.lua - what the book's filter (book/filter.lua) and its modules share: stopping the
-- build with a message, files read whole or by region, and blocks made from Markdown.

local M = {}

-- Stops the build: pandoc exits non-zero and prints this message.
local function die(message)
  io.stderr:write("book: " .. message .. "\n")
  error("book: " .. message, 0)
end

local function read_file(path)
  local file, why = io.open(path, "r")
  if not file then
    die("cannot include " .. path .. ": " .. (why or "cannot open it"))
  end
  local text = file:read("a")
  file:close()
  return text
end

local function file_exists(path)
  local file = io.open(path, "r")
  if file then
    file:close()
    return true
  end
  return false
end

local function lines_of(text)
  local lines = {}
  for line in (text .. (text:sub(-1) == "\n" and "" or "\n")):gmatch("(.-)\n") do
    lines[#lines + 1] = line
  end
  return lines
end

-- The name in a marker line "/* listing: NAME */" or "/* end listing: NAME */", or nil.
local function marker(line)
  local name = line:match("^%s*/%*%s*listing:%s*([%w_%-]+)%s*%*/%s*$")
  if name then return "begin", name end
  name = line:match("^%s*/%*%s*end listing:%s*([%w_%-]+)%s*%*/%s*$")
  if name then return "end", name end
  return nil
end

-- Removes the indentation the lines share, so a region cut from a function reads flush left.
local function dedent(lines)
  local common = nil
  for _, line in ipairs(lines) do
    if line:match("%S") then
      local indent = #line:match("^ *")
      if common == nil or indent < common then common = indent end
    end
  end
  local out = {}
  for i, line in ipairs(lines) do
    out[i] = line:sub((common or 0) + 1)
  end
  return out
end

-- The text of FILE, or of its region NAME, without marker lines; and the first and last line.
local function extract(path, region)
  local lines = lines_of(read_file(path))
  local kept, first, last, inside, seen = {}, nil, nil, region == nil, false
  for number, line in ipairs(lines) do
    local kind, name = marker(line)
    if kind == "begin" and name == region then
      if seen then die(path .. " has two regions named '" .. region .. "'") end
      inside, seen = true, true
    elseif kind == "end" and name == region then
      if not inside then die(path .. ": '/* end listing: " .. region .. " */' before its start") end
      inside = false
    elseif inside and kind == nil then
      kept[#kept + 1] = line
      first = first or number
      last = number
    end
  end
  if region and not seen then
    die(path .. " has no region '" .. region .. "' (a line '/* listing: " .. region .. " */')")
  end
  if region and inside then
    die(path .. ": region '" .. region .. "' has no line '/* end listing: " .. region .. " */'")
  end
  while #kept > 0 and not kept[#kept]:match("%S") do kept[#kept] = nil end
  if #kept == 0 then die(path .. (region and (" region '" .. region .. "'") or "") .. " is empty") end
  return table.concat(dedent(kept), "\n"), first, last
end

local function markdown(text)
  return pandoc.read(text, "markdown").blocks
end

local function escape_markdown(text)
  return (text:gsub("([\\`*_{}%[%]<>#|])", "\\%1"))
end

local function append(list, blocks)
  for _, block in ipairs(blocks) do list[#list + 1] = block end
  return list
end

M.die = die
M.read_file = read_file
M.file_exists = file_exists
M.lines_of = lines_of
M.extract = extract
M.markdown = markdown
M.escape_markdown = escape_markdown
M.append = append
return M
