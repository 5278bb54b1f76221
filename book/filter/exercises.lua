-- exercises.lua - an exercise's part of the book (book/filter.lua): how to run it, its API
-- header, its rubric and its hints, read from the course's own files.

local common = require("common")
local words = require("words")
local die, read_file, file_exists, extract = common.die, common.read_file, common.file_exists,
  common.extract
local markdown, escape_markdown, append = common.markdown, common.escape_markdown, common.append

local M = {}
-- Every id in the document: the filter's passes add those they find, exercise_blocks the
-- headings it makes.
M.anchors = {}
local anchors = M.anchors


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
  append(blocks, markdown(words.say("exercise_intro", name, header_path)))
  local text = extract(header_path)
  append(blocks, {listing_div(text, pandoc.Attr("", {"c"}), header_path)})
  local total, rows = 0, {}
  for _, test in ipairs(tests) do
    rows[#rows + 1] = "| " .. escape_markdown(test.sentence) .. " | " .. test.points .. " |"
    total = total + test.points
  end
  append(blocks, markdown(
    words.say("exercise_check", name) .. "\n\n" .. words.say("rubric_head") ..
    "\n|:--------------------------------|-----:|\n" .. table.concat(rows, "\n") ..
    "\n| " .. words.say("rubric_total") .. " | **" .. total .. "** |\n\n" ..
    words.say("rubric_caption", name, test_path) .. "\n"))
  -- Pandoc 2.17 puts a table's attributes nowhere; the rubric's class goes on a wrapping div.
  local last = #blocks
  blocks[last] = pandoc.Div({blocks[last]}, pandoc.Attr("", {"rubric"}, {{"data-exercise", name}}))
  -- The hint's levels, mild to explicit (harness/hint.sh), each folded away on its own.
  local level = 0
  for text in ((rubric.hint or "") .. "\n\n"):gmatch("(.-)\n\n+") do
    if text:match("%S") then
      level = level + 1
      local summary = level == 1 and words.say("hint", name) or words.say("closer_hint", name, level)
      append(blocks, {pandoc.RawBlock("html", "<details class=\"hint\"><summary>" .. summary ..
                                      "</summary>")})
      append(blocks, markdown(escape_markdown(text)))
      append(blocks, {pandoc.RawBlock("html", "</details>")})
    end
  end
  return blocks
end

M.chapter_exercises = chapter_exercises
M.exercise_anchor = exercise_anchor
M.listing_div = listing_div
M.exercise_blocks = exercise_blocks
return M
