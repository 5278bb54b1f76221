-- filter.lua - the book's pandoc filter: real code, real rubrics, measured numbers.
--
-- Run from the repository's root (paths are relative to it):
--   pandoc book.md --lua-filter book/filter.lua -M measurements=DIR ...
--
-- It replaces, in book.md:
--   ```{.c include="FILE"}```                 the whole of FILE
--   ```{.c include="FILE" listing="NAME"}```  the lines between "/* listing: NAME */" and
--                                             "/* end listing: NAME */" in FILE, dedented
--   ```{.c .declaration header="H"}```        kept as written, after checking that the CUDA
--                                             header H declares it so (when the header is here)
--   [text]{.measured key="K" ...}             K's value from DIR/summary.csv (see Span below)
--   [text]{.measured expr="EXPR" ...}         a number worked out from the measured values
--   [if true|if false]{.choose if="EXPR"}     the wording that the data bears out
--   ::: {.when if="EXPR"}                     its blocks, or those of its closing "else" div
--   ::: {.needs-measurements files="A.csv B.csv"}
--                                             its blocks when DIR has every file named, else a
--                                             notice naming the missing ones (a chapter whose
--                                             data `make measure` has not written there yet)
--   ::: {.exercise name="chNN-slug/NAME"}     followed by how to run it, its API header, its
--                                             rubric (from tests/chNN-slug/NAME.c) and its hint
--   ::: {.exercises chapter="chNN-slug"}      a section for each exercise of the chapter that
--                                             no .exercise div names
--   [](#fig-id)                               "Figure N", the number of the figure with that id
--   [](#heading-id)                           "section 1.4.2", the number of that heading
--   [](#tbl-id)                               "Table N", for a div {#tbl-id} around a table;
--                                             every table with a caption is numbered
-- and stops the build, naming what is wrong, on a missing file, region, exercise, figure,
-- measured value or internal link target. Written for pandoc 2.17 (Debian 12) and later.

local measurements = nil -- the folder of the measured CSV files, from -M measurements=DIR
local cuda_include = nil -- where cuda_runtime_api.h lives, from -M cuda-include=DIR
local summary = nil      -- key -> value, read from DIR/summary.csv on first use
local figures = {}       -- figure id -> its number
local sections = {}      -- heading id -> its section number, "1.4.2"
local section_counts = {}
local figure_count = 0
local anchors = {}       -- every id in the document
local exercises_named = {} -- "chNN-slug/NAME" -> true, for the exercises that have prose

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

-- --- Measured values ----------------------------------------------------------------------

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
-- An empty cell is nil: a row lookup gives nil (`== nil` tests for it), and .max and
-- .half_bytes pass over it.
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
  if fact == "max" or fact == "max_bytes" then
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
    die(path .. " has no row named '" .. fact .. "' (nor is it max, max_bytes, largest, " ..
        "largest_bytes or half_bytes)")
  end
  die(path .. ": a column has no '" .. tostring(fact) .. "' (max, max_bytes, largest, " ..
      "largest_bytes, half_bytes or [BYTES])")
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
        for i, title in ipairs(header) do
          local rows = columns[title].rows
          rows[#rows + 1] = {bytes = tonumber(cells[1]), name = cells[1], value = tonumber(cells[i])}
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

-- --- Exercises and their rubric ------------------------------------------------------------

-- Text as harness/report/rubric.awk escapes it: \\, \t and \n.
local function unescape(text)
  return (text:gsub("\\(.)", {["\\"] = "\\", t = "\t", n = "\n"}))
end

-- The exercise's title, hint and tests, from the one reader of the rubric (harness/report/rubric.awk),
-- which make check and the grader use too: {title, hint, tests = {{sentence, points}...}}.
local function read_rubric(test_path)
  local ok, output = pcall(pandoc.pipe, "awk", {"-f", "harness/report/rubric.awk", test_path}, "")
  if not ok then die("harness/report/rubric.awk could not read " .. test_path .. ": " .. tostring(output)) end
  local exercise = {tests = {}}
  for line in output:gmatch("[^\n]+") do
    local fields = {}
    for field in (line .. "\t"):gmatch("(.-)\t") do fields[#fields + 1] = field end
    if fields[1] == "exercise" then
      exercise.title, exercise.hint = unescape(fields[3]), unescape(fields[4] or "")
    elseif fields[1] == "test" then
      exercise.tests[#exercise.tests + 1] = {sentence = fields[4], points = tonumber(fields[3])}
    end
  end
  return exercise
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

-- The exercises of a chapter, "chNN-slug/NAME", in the book's order: exercises/ORDER, the list
-- make check and the grader follow too.
local function chapter_exercises(chapter)
  local names = {}
  for line in (read_file("exercises/ORDER") .. "\n"):gmatch("(.-)\n") do
    local name = line:gsub("#.*", ""):match("^%s*(%S+)")
    if name and name:sub(1, #chapter + 1) == chapter .. "/" then names[#names + 1] = name end
  end
  if #names == 0 then die("chapter " .. chapter .. " has no exercises in exercises/ORDER") end
  return names
end

local function exercise_anchor(name)
  return "exercise-" .. (name:gsub("[^%w]+", "-"))
end

-- What follows an exercise's prose: the command, the API, the rubric and the hint.
-- A listing: its code, then where it comes from. Kept on one page in print (book.css), unless
-- it is longer than about half a page, which moved on whole would leave half a page blank: a
-- line of code is about 4.8 mm there (13.5 pt), and half of the page inside its margins 123 mm
-- on Letter paper (133 on A4), less the listing's padding and its source line.
local LONG_LISTING_LINES = 22

local function listing_div(text, attr, source)
  local classes = {"listing"}
  if select(2, text:gsub("\n", "")) + 1 > LONG_LISTING_LINES then classes[2] = "long" end
  return pandoc.Div({pandoc.CodeBlock(text, attr), pandoc.Para({pandoc.Code(source)})},
                    pandoc.Attr("", classes))
end

local function exercise_blocks(name, heading_level, with_title)
  local test_path = "tests/" .. name .. ".c"
  local header_path = "exercises/" .. name .. ".h"
  if not file_exists(test_path) then
    die("the book names exercise " .. name .. ", but " .. test_path .. " does not exist")
  end
  local rubric = read_rubric(test_path)
  local tests = rubric.tests
  if #tests == 0 then die(test_path .. " has no COURSE_TEST(name, points) line") end

  local blocks = {}
  if with_title then
    local id = exercise_anchor(name)
    append(blocks, {pandoc.Header(heading_level, {pandoc.Str(rubric.title)}, pandoc.Attr(id))})
    anchors[id] = true
  end
  append(blocks, markdown("You implement `exercises/" .. name .. ".c`; its header, `" .. header_path ..
                          "`, is the contract:"))
  local text = extract(header_path)
  append(blocks, {listing_div(text, pandoc.Attr("", {"c"}), header_path)})
  local total, rows = 0, {}
  for _, test in ipairs(tests) do
    rows[#rows + 1] = "| " .. escape_markdown(test.sentence) .. " | " .. test.points .. " |"
    total = total + test.points
  end
  append(blocks, markdown(
    "Check it with `make check EX=" .. name .. "`. Its tests, and what each is worth:\n\n" ..
    "| test | points |\n|:--------------------------------|-----:|\n" .. table.concat(rows, "\n") ..
    "\n| **total** | **" .. total .. "** |\n\n" ..
    ": Rubric of " .. name .. ", read from `" .. test_path .. "`\n"))
  -- Pandoc 2.17 puts a table's attributes nowhere; the rubric's class goes on a wrapping div.
  local last = #blocks
  blocks[last] = pandoc.Div({blocks[last]}, pandoc.Attr("", {"rubric"}, {{"data-exercise", name}}))
  -- The hint's levels, mild to explicit (harness/hint.sh), each folded away on its own.
  local level = 0
  for text in ((rubric.hint or "") .. "\n\n"):gmatch("(.-)\n\n+") do
    if text:match("%S") then
      level = level + 1
      local summary = level == 1 and "Hint (make hint EX=" .. name .. ")"
                      or "A closer hint (make hint EX=" .. name .. " LEVEL=" .. level .. ")"
      append(blocks, {pandoc.RawBlock("html", "<details class=\"hint\"><summary>" .. summary ..
                                      "</summary>")})
      append(blocks, markdown(escape_markdown(text)))
      append(blocks, {pandoc.RawBlock("html", "</details>")})
    end
  end
  return blocks
end

-- --- Before everything: the parts whose measurements are not there yet ---------------------

local read_meta = {
  Meta = function(meta)
    if meta.measurements then measurements = pandoc.utils.stringify(meta.measurements) end
    if meta["cuda-include"] then cuda_include = pandoc.utils.stringify(meta["cuda-include"]) end
  end,
}

-- ::: {.needs-measurements files="staging.csv zero_copy.csv"}: its blocks when the folder of
-- measurements has every file named. Otherwise a notice naming the missing files: a folder
-- measured before a chapter's programs existed builds a book that says which data it lacks,
-- rather than failing or showing made-up numbers as measured. This runs before the survey, so
-- that what it leaves out is neither numbered nor linked to.
local missing_measurements = {
  Div = function(div)
    if not div.classes:includes("needs-measurements") then return nil end
    local files = div.attributes["files"]
    if not files then die("a .needs-measurements div has no files=\"A.csv B.csv\" attribute") end
    local missing = {}
    for name in files:gmatch("%S+") do
      if not measurements or not file_exists(measurements .. "/" .. name) then
        missing[#missing + 1] = name
      end
    end
    if #missing == 0 then return div.content end
    local named = {}
    for i, name in ipairs(missing) do named[i] = "`" .. name .. "`" end
    return pandoc.Div(markdown("**Not measured yet.** What belongs here comes from " ..
      table.concat(named, ", ") .. ", which `" .. tostring(measurements) .. "` does not hold: " ..
      "that folder was measured before the programs that write " ..
      (#missing == 1 and "it" or "them") .. " existed. `make measure` on a machine with an " ..
      "NVIDIA GPU writes " .. (#missing == 1 and "it" or "them") .. " beside the others."),
      pandoc.Attr("", {"unmeasured"}, {{"data-missing", table.concat(missing, " ")}}))
  end,
}

-- --- First pass: what the document holds ---------------------------------------------------

local function is_figure_para(para)
  return #para.content == 1 and para.content[1].t == "Image" and para.content[1].title:match("^fig:")
end

local survey = {
  Header = function(h)
    anchors[h.identifier] = true
    -- The number --number-sections will give it: "1.4.2" (unnumbered ones have none).
    if h.classes:includes("unnumbered") then return end
    section_counts[h.level] = (section_counts[h.level] or 0) + 1
    for level = h.level + 1, 6 do section_counts[level] = nil end
    local parts = {}
    for level = 1, h.level do parts[level] = tostring(section_counts[level] or 0) end
    sections[h.identifier] = table.concat(parts, ".")
  end,
  Div = function(div)
    if div.identifier ~= "" then anchors[div.identifier] = true end
    if div.classes:includes("exercise") then
      local name = div.attributes["name"]
      if not name then die("an .exercise div has no name attribute (name=\"chNN-slug/NAME\")") end
      exercises_named[name] = true
    end
    if div.classes:includes("exercises") and div.attributes["chapter"] then
      for _, name in ipairs(chapter_exercises(div.attributes["chapter"])) do
        anchors[exercise_anchor(name)] = true
      end
    end
  end,
  Span = function(span)
    if span.identifier ~= "" then anchors[span.identifier] = true end
  end,
  CodeBlock = function(block)
    if block.identifier ~= "" then anchors[block.identifier] = true end
  end,
  Para = function(para)
    if is_figure_para(para) then
      figure_count = figure_count + 1
      local id = para.content[1].identifier
      if id ~= "" then
        figures[id] = figure_count
        anchors[id] = true
      end
    end
  end,
  -- pandoc 3 has a Figure block instead of a paragraph holding one image.
  Figure = function(figure)
    figure_count = figure_count + 1
    if figure.identifier ~= "" then
      figures[figure.identifier] = figure_count
      anchors[figure.identifier] = true
    end
  end,
}

-- --- Second pass: the replacements ---------------------------------------------------------

local figure_number = 0

local function check_image(image)
  local src = image.src
  if src:match("^%a+:") then return end -- a URL: not ours to check
  for _, dir in ipairs(PANDOC_STATE.resource_path) do
    if file_exists(dir .. "/" .. src) then return end
  end
  die("figure " .. src .. " does not exist (looked in " ..
      table.concat(PANDOC_STATE.resource_path, ", ") .. ")")
end

local function number_caption(inlines)
  figure_number = figure_number + 1
  table.insert(inlines, 1, pandoc.Space())
  table.insert(inlines, 1, pandoc.Strong({pandoc.Str("Figure " .. figure_number .. ".")}))
end

local function declaration(block)
  local header = block.attributes["header"] or "cuda_runtime_api.h"
  local path = (cuda_include or "") .. "/" .. header
  if not cuda_include or not file_exists(path) then
    io.stderr:write("book: note: " .. path .. " not found; the declarations are not checked\n")
    return
  end
  local squeeze = function(s) return (s:gsub("%s+", " "):gsub(" ?([%(%),;%*]) ?", "%1")) end
  local text = squeeze(read_file(path):gsub("CUDARTAPI", ""):gsub("__host__", ""):gsub("extern", "")
                                       :gsub("CUDART_CB", ""))
  for line in (block.text .. "\n"):gmatch("(.-)\n") do
    if line:match("%S") and not line:match("^%s*//") and not line:match("^%s*/%*") and
       not text:find(squeeze(line), 1, true) then
      die("book.md declares `" .. line .. "`, which " .. path .. " does not")
    end
  end
end

local replace = {
  CodeBlock = function(block)
    if block.classes:includes("declaration") then
      declaration(block)
      block.classes = block.classes:filter(function(c) return c ~= "declaration" end)
      block.attributes["header"] = nil
      return block
    end
    local path = block.attributes["include"]
    if not path then return nil end
    local region = block.attributes["listing"]
    local text, first, last = extract(path, region)
    local caption = path .. (first == last and (", line " .. first)
                             or (", lines " .. first .. "\u{2013}" .. last))
    local attr = pandoc.Attr(block.identifier, block.classes, {})
    return listing_div(text, attr, caption)
  end,

  Span = function(span)
    if span.classes:includes("measured") then return measured(span) end
    if span.classes:includes("choose") then return choose(span) end
  end,

  -- Comments in book.md are for its editors, not its readers.
  RawBlock = function(raw)
    if raw.format:match("html") and raw.text:match("^%s*<!%-%-") then return {} end
  end,

  Div = function(div)
    if div.classes:includes("when") then return when(div) end
    if div.classes:includes("exercise") then
      local name = div.attributes["name"]
      div.attributes["name"] = nil
      append(div.content, exercise_blocks(name, nil, false))
      return div
    end
    if div.classes:includes("exercises") then
      local chapter = div.attributes["chapter"]
      local level = tonumber(div.attributes["level"] or "3")
      if not chapter then die("an .exercises div has no chapter attribute") end
      -- order="a b c": these first, when they exist (the rest follow by name).
      local sorted, rank, position = chapter_exercises(chapter), {}, 0
      for word in (div.attributes["order"] or ""):gmatch("%S+") do
        position = position + 1
        rank[chapter .. "/" .. word] = position
      end
      table.sort(sorted, function(a, b)
        local ra, rb = rank[a] or math.huge, rank[b] or math.huge
        if ra ~= rb then return ra < rb end
        return a < b
      end)
      local blocks = {}
      for _, name in ipairs(sorted) do
        if not exercises_named[name] then append(blocks, exercise_blocks(name, level, true)) end
      end
      return blocks
    end
  end,

  Image = function(image)
    check_image(image)
    return image
  end,

  Para = function(para)
    if is_figure_para(para) then
      number_caption(para.content[1].caption)
      return para
    end
  end,

  Figure = function(figure)
    if figure.caption.long[1] then number_caption(figure.caption.long[1].content) end
    return figure
  end,
}

-- --- Third pass: tables get numbers; fourth: links get their text ------------------------
-- A table with a caption is "Table N." in order, rubrics included, which the second pass made;
-- a div with an id around a table ({#tbl-kinds}) lends [](#tbl-kinds) that number.

local table_numbers = {} -- div id -> the number of the table inside it
local table_count = 0

local number_tables = {
  Table = function(tbl)
    local caption = tbl.caption.long[1]
    if not caption then return nil end
    table_count = table_count + 1
    table.insert(caption.content, 1, pandoc.Space())
    table.insert(caption.content, 1, pandoc.Strong({pandoc.Str("Table " .. table_count .. ".")}))
    if not (FORMAT:match("html") or FORMAT:match("epub")) then return tbl end
    -- A wide table scrolls sideways in a box of its own (book.css); its caption goes below that
    -- box, not inside it, so that on a phone it stays in view and wraps to the page's width.
    tbl.caption.long = {}
    return pandoc.Div({pandoc.Div({tbl}, pandoc.Attr("", {"table-scroll"})),
                       pandoc.Div({pandoc.Plain(caption.content)}, pandoc.Attr("", {"table-caption"}))},
                      pandoc.Attr("", {"captioned-table"}))
  end,
  -- Visited after the blocks inside it, so the last table numbered is the one it holds.
  Div = function(div)
    if div.identifier == "" then return nil end
    for _, block in ipairs(div.content) do
      if block.t == "Table" or (block.t == "Div" and block.classes:includes("captioned-table")) then
        table_numbers[div.identifier] = table_count
      end
    end
  end,
}

local resolve_links = {
  Link = function(link)
    local target = link.target:match("^#(.*)$")
    if not target then return nil end
    if not anchors[target] then die("book.md links to #" .. target .. ", which no heading or figure has") end
    if #link.content == 0 then
      if figures[target] then
        link.content = {pandoc.Str("Figure\u{00a0}" .. figures[target])}
      elseif table_numbers[target] then
        link.content = {pandoc.Str("Table\u{00a0}" .. table_numbers[target])}
      elseif sections[target] then
        link.content = {pandoc.Str("section\u{00a0}" .. sections[target])}
      else
        die("an empty link to #" .. target .. " names no figure, table or numbered section")
      end
    end
    return link
  end,
}

-- A placeholder data set (book/placeholder-data.sh) says so on the book's first page.
local function warn_placeholder(doc)
  if summary and tostring(summary["gpu"]):match("PLACEHOLDER") then
    table.insert(doc.blocks, 1, pandoc.Div(markdown(
      "**Placeholder data.** The figures and numbers in this build come from made-up values " ..
      "(`" .. measurements .. "`), not from a GPU. Run `make measure` on a GPU for the real book."),
      pandoc.Attr("", {"placeholder"})))
  end
  return doc
end

return {read_meta, missing_measurements, survey, replace, number_tables, resolve_links,
        {Pandoc = warn_placeholder}}
