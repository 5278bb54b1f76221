-- measured.lua - the measured numbers in the book's text (book/filter.lua): values from the
-- folder of measurements (summary.csv and the tables beside it), expressions worked out
-- from them, and the wording the data bears out.

local common = require("common")
local die, read_file, file_exists, lines_of = common.die, common.read_file, common.file_exists,
  common.lines_of

local M = {}
local measurements = nil -- the folder of the measured CSV files (M.set_folder)
local summary = nil      -- key -> value, read from its summary.csv on first use

function M.set_folder(folder)
  measurements = folder
end

-- summary.csv's values where they have been read, else nil.
function M.summary_if_read()
  return summary
end


local function load_summary()
  if summary then return summary end
  if not measurements or measurements == "" then
    die("no measured data: run pandoc with -M measurements=DIR (make book picks DIR)")
  end
  local path = measurements .. "/summary.csv"
  if not file_exists(path) then
    die(path .. " is missing: run `make measure` on a machine with the GPU")
  end
  summary = {}
  for _, line in ipairs(lines_of(read_file(path))) do
    local key, value = line:match("^([%w_]+),(.*)$")
    if key and key ~= "key" then summary[key] = value end
  end
  return summary
end

local function format_number(value, digits)
  local text = string.format("%." .. digits .. "f", value)
  -- Thousands of five digits or more separated by a thin space, as in 30 073 us (four digits
  -- stay whole: 4200). The whole part only, after any sign; each pass splits off the last
  -- three digits before the first separator, so the digits never change places and the
  -- separator's three bytes are never taken apart.
  local sign, int, rest = text:match("^(%-?)(%d+)(.*)$")
  if int and #int > 4 then
    local count
    repeat
      int, count = int:gsub("^(%d+)(%d%d%d)", "%1\u{2009}%2")
    until count == 0
    text = sign .. int .. rest
  end
  return text
end

local function format_bytes(bytes)
  local units = {"B", "KiB", "MiB", "GiB", "TiB"}
  local u = 1
  while bytes >= 1024 and u < #units do
    bytes, u = bytes / 1024, u + 1
  end
  local text = bytes == math.floor(bytes) and string.format("%d", bytes) or string.format("%.1f", bytes)
  return text .. "\u{00a0}" .. units[u]
end

-- A measured table, DIR/NAME.csv, whose first column is the size in bytes: NAME.COLUMN is one
-- of its columns, with
--   .max  .max_bytes    its largest value, and the size of the row where it is largest
--   .largest            its value at the largest size (.largest_bytes: that size)
--   .half_bytes         the smallest size where it reaches half of its value at the largest size
--   [BYTES]             its value in the row of BYTES bytes
--   .NAME or ["NAME"]   its value in the row whose first column is NAME, for a table whose first
--                       column names its rows (pinning_cost.get_ms.cudaMallocHost)
--   .min .sum .mean     over its rows, and .count, how many rows have a number in it
--   .first              its value in the first row (.largest: in the last)
--   .where{COL=V, ...}  its value in the first row whose columns COL hold V (a number or a
--                       name), for a table whose rows are told apart by several columns:
--                       sweep.utilisation.where{variant="naive", batch_samples=64, step_ms=1}
-- An empty cell is nil: a row lookup gives nil (`== nil` tests for it), and .max, .min, .sum,
-- .mean, .count and .half_bytes pass over it.
local tables = {} -- NAME -> its columns, read on first use

local function column_fact(column, fact)
  local rows, path = column.rows, column.path
  if type(fact) == "number" then
    for _, row in ipairs(rows) do
      if row.bytes == fact then return row.value end
    end
    die(path .. " has no row for " .. fact .. " bytes")
  end
  local last = rows[#rows]
  if fact == "where" then
    return function(wanted)
      if type(wanted) ~= "table" then die(path .. ": .where takes {COLUMN = VALUE, ...}") end
      for _, row in ipairs(rows) do
        local all = true
        for title, value in pairs(wanted) do
          local cell = row.cells[title]
          if cell == nil then die(path .. " has no column '" .. tostring(title) .. "' (in .where)") end
          if not (cell == tostring(value) or (tonumber(cell) ~= nil and tonumber(cell) == tonumber(value))) then
            all = false
            break
          end
        end
        if all then return row.value end -- nil for an empty cell
      end
      local asked = {}
      for title, value in pairs(wanted) do asked[#asked + 1] = title .. "=" .. tostring(value) end
      table.sort(asked)
      die(path .. " has no row where " .. table.concat(asked, ", "))
    end
  elseif fact == "min" or fact == "sum" or fact == "mean" or fact == "count" then
    local least, sum, count = nil, 0, 0
    for _, row in ipairs(rows) do
      if row.value then
        least = (least == nil or row.value < least) and row.value or least
        sum, count = sum + row.value, count + 1
      end
    end
    if fact == "count" then return count end
    if count == 0 then die(path .. ": a column has no number in any row") end
    return fact == "min" and least or fact == "sum" and sum or sum / count
  elseif fact == "first" then
    return rows[1].value
  elseif fact == "max" or fact == "max_bytes" then
    local best = nil
    for _, row in ipairs(rows) do
      if row.value and (best == nil or row.value > best.value) then best = row end
    end
    if best == nil then die(path .. ": a column has no number in any row") end
    return fact == "max" and best.value or best.bytes
  elseif fact == "largest" then
    return last.value -- nil for an empty cell
  elseif fact == "largest_bytes" then
    return last.bytes
  elseif fact == "half_bytes" then
    for _, row in ipairs(rows) do
      if row.value and last.value and row.value >= last.value / 2 then return row.bytes end
    end
  elseif type(fact) == "string" then
    for _, row in ipairs(rows) do
      if row.name == fact then return row.value end
    end
    die(path .. " has no row named '" .. fact .. "' (nor is it max, max_bytes, min, sum, mean, " ..
        "count, first, largest, largest_bytes, half_bytes or where)")
  end
  die(path .. ": a column has no '" .. tostring(fact) .. "' (max, max_bytes, min, sum, mean, " ..
      "count, first, largest, largest_bytes, half_bytes, where or [BYTES])")
end

local function measured_table(name)
  if tables[name] then return tables[name] end
  local path = measurements .. "/" .. name .. ".csv"
  if not file_exists(path) then die(path .. " is missing: run `make measure` on a machine with the GPU") end
  local header, columns = nil, {}
  for _, line in ipairs(lines_of(read_file(path))) do
    if not line:match("^#") and line:match("%S") then
      local cells = {}
      for cell in (line .. ","):gmatch("([^,]*),") do cells[#cells + 1] = cell end
      if header == nil then
        header = cells
        for _, title in ipairs(header) do
          columns[title] = setmetatable({rows = {}, path = path}, {__index = column_fact})
        end
      else
        local record = {} -- the row's cells by their column's title, for .where
        for i, title in ipairs(header) do record[title] = cells[i] or "" end
        for i, title in ipairs(header) do
          local rows = columns[title].rows
          rows[#rows + 1] = {bytes = tonumber(cells[1]), name = cells[1], value = tonumber(cells[i]),
                             cells = record}
        end
      end
    end
  end
  if header == nil or #columns[header[1]].rows == 0 then die(path .. " has no rows") end
  tables[name] = setmetatable({}, {__index = function(_, title)
    return columns[title] or die(path .. " has no column '" .. tostring(title) .. "'")
  end})
  return tables[name]
end

-- Evaluates a Lua expression over the measured values, for the sentences whose numbers or
-- wording follow the data: summary.csv's keys by name (h2d_pinned_gb_per_s), the measured
-- tables' columns as above (bandwidth.h2d_pageable.max), and Lua's math functions (max, min,
-- abs). "h2d_pageable_gb_per_s < 0.95 * bandwidth.h2d_pageable.max" is true or false,
-- "d2d_gb_per_s / 2 / h2d_pinned_gb_per_s" a number.
local function evaluate(expression)
  local values = load_summary()
  local scope = setmetatable({}, {__index = function(_, name)
    if values[name] ~= nil then return tonumber(values[name]) or values[name] end
    if file_exists(measurements .. "/" .. name .. ".csv") then return measured_table(name) end
    if math[name] ~= nil then return math[name] end
    die("book.md uses '" .. name .. "', which neither " .. measurements .. "/summary.csv nor a " ..
        "measured table has (in `" .. expression .. "`)")
  end})
  local chunk, why = load("return " .. expression, "=expression", "t", scope)
  if not chunk then die("book.md: `" .. expression .. "` is not an expression: " .. why) end
  local ok, value = pcall(chunk)
  if not ok and tostring(value):match("^book: ") then error(value, 0) end -- said already
  if not ok then die("book.md: `" .. expression .. "` failed: " .. tostring(value)) end
  return value
end

-- [text]{.measured key="h2d_pinned_gb_per_s" digits="1" scale="0.001" unit="TB/s"}
-- [text]{.measured key="h2d_pinned_gb_per_s" percent-of="63.0"}   -> "87.6%" (of a number,
--                                                                    or of another key's value)
-- [text]{.measured key="largest_bytes" as="size"}                   -> "1 GiB"
-- [text]{.measured key="date" as="date"}                            -> "2026-11-29"
-- [text]{.measured key="pcie_lanes"}                                -> "16", as written
-- [text]{.measured key="d2d_gb_per_s" per="h2d_pinned_gb_per_s" digits="0"} -> "76"
-- [text]{.measured csv="bandwidth" column="h2d_pinned" pick="max"}  from a table (from_table)
-- [text]{.measured csv="break_even" column="register_copies" row="4096" none="never"}
--                                                                   "never" for an empty cell
-- [text]{.measured expr="d2d_gb_per_s / 2" digits="0"}              an expression (evaluate)
-- The text between the brackets is ignored: write there what the value is, for the reader of
-- book.md.
-- A value read from a measured table, DIR/NAME.csv (see measured_table):
--   csv="bandwidth" column="h2d_pinned" row="1024"    that column in the row of 1024 bytes
--   csv="pinning_cost" column="get_ms" row="cudaMallocHost"  ... in the row named so
--   csv="bandwidth" column="h2d_pageable" pick="max"  its largest value
--   pick="max-bytes"                                  the size of the row where it is largest
--   pick="half-bytes"    the smallest size where it reaches half of its value at the largest size
--   pick="largest"       its value in the last row
local function from_table(attrs)
  local name, pick = attrs["csv"], attrs["pick"]
  if not attrs["column"] then die("a .measured span with csv=\"" .. name .. "\" has no column attribute") end
  local column = measured_table(name)[attrs["column"]]
  if attrs["row"] then
    local value = column[tonumber(attrs["row"]) or attrs["row"]]
    return value and tostring(value) -- nil for an empty cell: see none= in measured()
  end
  if pick == "max" or pick == "max-bytes" or pick == "half-bytes" or pick == "largest" then
    local value = column[(pick:gsub("-", "_"))]
    return value and tostring(value)
  end
  die("a .measured span with csv=\"" .. name .. "\" needs row=\"BYTES\" or pick=\"max\", " ..
      "\"max-bytes\", \"half-bytes\" or \"largest\"")
end

local function measured(span)
  local key = span.attributes["key"]
  local values = load_summary()
  if span.attributes["csv"] then
    key = span.attributes["csv"] .. ".csv:" .. (span.attributes["column"] or "")
    values = setmetatable({[key] = from_table(span.attributes)}, {__index = values})
  elseif span.attributes["expr"] then
    key = span.attributes["expr"]
    local value = evaluate(key)
    if type(value) ~= "number" then die("book.md: `" .. key .. "` is not a number") end
    values = setmetatable({[key] = tostring(value)}, {__index = values})
  end
  if not key then die("a .measured span has no key attribute (nor csv and column)") end
  local value = values[key]
  -- none="never": the words for an empty cell of a measured table (a break-even never reached).
  if value == nil and span.attributes["csv"] and span.attributes["none"] then
    return pandoc.Span({pandoc.Str(span.attributes["none"])},
                       pandoc.Attr("", {"measured"}, {{"title", "measured: " .. key .. " (none)"}}))
  end
  if value == nil then
    die(measurements .. "/summary.csv has no value '" .. key .. "' (run `make measure` again?" ..
        (key:match("^pcie_") and " The PCIe link is read through NVML, libnvidia-ml.so.1, which " ..
         "the measuring machine must have)" or ")"))
  end
  local number = tonumber(value)
  local attrs = span.attributes
  local text
  local formatted = false
  for _, attr in ipairs({"digits", "scale", "unit", "percent-of", "per", "times", "as", "expr"}) do
    formatted = formatted or attrs[attr] ~= nil
  end
  if attrs["as"] == "date" then
    text = value:match("^%d%d%d%d%-%d%d%-%d%d") or value
  elseif number == nil or not formatted then
    text = value -- as the CSV has it: "NVIDIA H200", "13.0", "16"
  elseif attrs["as"] == "size" then
    text = format_bytes(number)
  elseif attrs["percent-of"] then
    local whole = tonumber(attrs["percent-of"]) or tonumber(values[attrs["percent-of"]])
    if whole == nil then die(measurements .. "/summary.csv has no number '" .. attrs["percent-of"] .. "'") end
    text = format_number(100 * number / whole, tonumber(attrs["digits"] or "1")) .. "%"
  else
    -- per="KEY" divides by another value, times="KEY" multiplies by one: ratios and products
    -- of measured figures, such as GB/s x microseconds = kilobytes.
    for attr, combine in pairs({per = function(a, b) return a / b end,
                                times = function(a, b) return a * b end}) do
      if attrs[attr] then
        local other = tonumber(values[attrs[attr]])
        if other == nil then die(measurements .. "/summary.csv has no number '" .. attrs[attr] .. "'") end
        number = combine(number, other)
      end
    end
    number = number * tonumber(attrs["scale"] or "1")
    text = format_number(number, tonumber(attrs["digits"] or "1"))
    if attrs["unit"] == "%" then text = text .. "%"
    elseif attrs["unit"] then text = text .. "\u{00a0}" .. attrs["unit"] end
  end
  return pandoc.Span({pandoc.Str(text)}, pandoc.Attr("", {"measured"}, {{"title", "measured: " .. key}}))
end

-- Wording that follows the data. book.md states a comparison only where the data bears it out:
--   [less|more]{.choose if="smallest_h2d_pageable_us < smallest_h2d_pinned_us"}
--       the words before the bar when the expression is true, those after it when false;
--   ::: {.when if="EXPR"}         its blocks when EXPR is true; when false, those of an
--   :::: else                     "else" div at its end, if it has one, else nothing
--   ::::
--   :::
local function condition(element)
  local expression = element.attributes["if"]
  if not expression then die("a ." .. element.classes[1] .. " has no if=\"EXPR\" attribute") end
  local value = evaluate(expression)
  if type(value) ~= "boolean" then die("book.md: `" .. expression .. "` is not true or false") end
  return value
end

local function choose(span)
  local branches, current = {{}, {}}, 1
  for _, inline in ipairs(span.content) do
    local before, after = nil, nil
    if inline.t == "Str" then before, after = inline.text:match("^(.-)|(.*)$") end
    if before and current == 1 then
      if before ~= "" then table.insert(branches[1], pandoc.Str(before)) end
      current = 2
      if after ~= "" then table.insert(branches[2], pandoc.Str(after)) end
    else
      table.insert(branches[current], inline)
    end
  end
  if current == 1 then die("a .choose span has no '|' between its two wordings: " .. pandoc.utils.stringify(span)) end
  local chosen = branches[condition(span) and 1 or 2]
  while chosen[1] and chosen[1].t == "Space" do table.remove(chosen, 1) end
  while chosen[#chosen] and chosen[#chosen].t == "Space" do table.remove(chosen) end
  return chosen
end

local function when(div)
  local blocks, otherwise = {}, {}
  for i, block in ipairs(div.content) do
    if i == #div.content and block.t == "Div" and block.classes:includes("else") then
      otherwise = block.content
    else
      blocks[#blocks + 1] = block
    end
  end
  return condition(div) and blocks or otherwise
end

M.measured = measured
M.choose = choose
M.when = when
return M
