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
-- This file holds the passes over the document; book/filter/ the parts they call on: the
-- measured values (measured.lua), the exercises' blocks (exercises.lua), and files and
-- messages (common.lua).

local measurements = nil -- the folder of the measured CSV files, from -M measurements=DIR
local cuda_include = nil -- where cuda_runtime_api.h lives, from -M cuda-include=DIR
local figures = {}       -- figure id -> its number
local sections = {}      -- heading id -> its section number, "1.4.2"
local section_counts = {}
local figure_count = 0
local exercises_named = {} -- "chNN-slug/NAME" -> true, for the exercises that have prose

-- The filter's modules, beside it in book/filter/.
package.path = (PANDOC_SCRIPT_FILE:match("^(.*)/") or ".") .. "/filter/?.lua;" .. package.path
local common = require("common")
local measured = require("measured")
local exercises = require("exercises")
local words = require("words")
local die, read_file, file_exists, extract = common.die, common.read_file, common.file_exists,
  common.extract
local markdown, append = common.markdown, common.append
local chapter_exercises, exercise_anchor = exercises.chapter_exercises, exercises.exercise_anchor
local listing_div, exercise_blocks = exercises.listing_div, exercises.exercise_blocks
local anchors = exercises.anchors -- every id in the document

-- --- Before everything: the parts whose measurements are not there yet ---------------------

local read_meta = {
  Meta = function(meta)
    words.set_language(meta.lang and pandoc.utils.stringify(meta.lang))
    -- Where the book has two editions, the page's first line, above its title, links to the
    -- other (in HTML: an EPUB cannot link outside itself).
    if meta["other-edition"] ~= nil and FORMAT:match("html") then
      meta["include-before"] = pandoc.MetaBlocks({pandoc.RawBlock("html", words.say("other_edition"))})
    end
    if meta.measurements then measurements = pandoc.utils.stringify(meta.measurements) end
    measured.set_folder(measurements)
    if meta["cuda-include"] then cuda_include = pandoc.utils.stringify(meta["cuda-include"]) end
    return meta
  end,
}

-- ::: {.needs-measurements files="staging.csv zero_copy.csv"} (gpus="2" where the programs need
-- two GPUs, which the notice then names as the reason): its blocks when the folder of
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
    -- gpus="N": what it needs is N GPUs, which the machine measured lacked, not a later program.
    local gpus = div.attributes["gpus"]
    local notice = gpus and words.say("not_measured_gpus", table.concat(named, ", "),
                                      tostring(measurements), gpus, gpus)
      or words.say(#missing == 1 and "not_measured_one" or "not_measured_many",
                   table.concat(named, ", "), tostring(measurements))
    return pandoc.Div(markdown(notice),
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
  table.insert(inlines, 1, pandoc.Strong({pandoc.Str(words.say("figure_caption", figure_number))}))
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
    local caption = first == last and words.say("listing_line", path, first)
                    or words.say("listing_lines", path, first, last)
    local attr = pandoc.Attr(block.identifier, block.classes, {})
    return listing_div(text, attr, caption)
  end,

  Span = function(span)
    if span.classes:includes("measured") then return measured.measured(span) end
    if span.classes:includes("choose") then return measured.choose(span) end
  end,

  -- Comments in book.md are for its editors, not its readers.
  RawBlock = function(raw)
    if raw.format:match("html") and raw.text:match("^%s*<!%-%-") then return {} end
  end,

  Div = function(div)
    if div.classes:includes("when") then return measured.when(div) end
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
    table.insert(caption.content, 1, pandoc.Strong({pandoc.Str(words.say("table_caption", table_count))}))
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
        link.content = {pandoc.Str(words.say("figure_ref", figures[target]))}
      elseif table_numbers[target] then
        link.content = {pandoc.Str(words.say("table_ref", table_numbers[target]))}
      elseif sections[target] then
        link.content = {pandoc.Str(words.say("section_ref", sections[target]))}
      else
        die("an empty link to #" .. target .. " names no figure, table or numbered section")
      end
    end
    return link
  end,
}

-- A placeholder data set (book/placeholder-data.sh) says so on the book's first page.
local function warn_placeholder(doc)
  local summary = measured.summary_if_read()
  if summary and tostring(summary["gpu"]):match("PLACEHOLDER") then
    table.insert(doc.blocks, 1, pandoc.Div(markdown(words.say("placeholder", measurements)),
      pandoc.Attr("", {"placeholder"})))
  end
  return doc
end

return {read_meta, missing_measurements, survey, replace, number_tables, resolve_links,
        {Pandoc = warn_placeholder}}
