-- words.lua - what the filters write into the book themselves, in each edition's language.
--
-- The book's metadata says its language (lang: en, or zh-CN for book.zh.md); everything the
-- filters add to the text (figure and table numbers, cross references, listing captions, the
-- exercises' generated sections, the notices) is said here once per language, so that both
-- editions come from the one mechanism and a new phrase cannot be added to one only: say()
-- stops the build when a language lacks a phrase. Each phrase is a string.format pattern.
local M = {}

local phrases = {
  en = {
    figure_caption = "Figure %s.",
    table_caption = "Table %s.",
    figure_ref = "Figure\u{00a0}%s",
    table_ref = "Table\u{00a0}%s",
    section_ref = "section\u{00a0}%s",
    listing_line = "%s, line %s",
    listing_lines = "%s, lines %s\u{2013}%s",
    exercise_intro = "You implement `exercises/%s.c`; its header, `%s`, is the contract:",
    exercise_check = "Check it with `make check EX=%s`. Its tests, and what each is worth:",
    rubric_head = "| test | points |",
    rubric_total = "**total**",
    rubric_caption = ": Rubric of %s, read from `%s`",
    hint = "Hint (make hint EX=%s)",
    closer_hint = "A closer hint (make hint EX=%s LEVEL=%s)",
    not_measured_one = "**Not measured yet.** What belongs here comes from %s, which `%s` does " ..
      "not hold: that folder was measured before the program that writes it existed. " ..
      "`make measure` on a machine with an NVIDIA GPU writes it beside the others.",
    not_measured_many = "**Not measured yet.** What belongs here comes from %s, which `%s` " ..
      "does not hold: that folder was measured before the programs that write them existed. " ..
      "`make measure` on a machine with an NVIDIA GPU writes them beside the others.",
    not_measured_gpus = "**Not measured yet.** What belongs here comes from %s, which `%s` does " ..
      "not hold: the programs that write it need %s GPUs, and that folder was measured on a " ..
      "machine with fewer. `make measure` on a machine with %s or more NVIDIA GPUs writes it, " ..
      "with the rest of the book's data.",
    placeholder = "**Placeholder data.** The figures and numbers in this build come from " ..
      "made-up values (`%s`), not from a GPU. Run `make measure` on a GPU for the real book.",
    other_edition = "<p class=\"edition\" lang=\"zh-CN\"><a href=\"zh/index.html\">中文版</a></p>",
  },
  zh = {
    figure_caption = "图 %s.",
    table_caption = "表 %s.",
    figure_ref = "图\u{00a0}%s",
    table_ref = "表\u{00a0}%s",
    section_ref = "第\u{00a0}%s\u{00a0}节",
    listing_line = "%s，第 %s 行",
    listing_lines = "%s，第 %s\u{2013}%s 行",
    exercise_intro = "你要实现的是 `exercises/%s.c`；它的头文件 `%s` 就是约定：",
    exercise_check = "用 `make check EX=%s` 检查。它的测试和各自的分值：",
    rubric_head = "| 测试 | 分值 |",
    rubric_total = "**合计**",
    rubric_caption = ": %s 的评分表，读自 `%s`",
    hint = "提示（make hint EX=%s）",
    closer_hint = "更具体的提示（make hint EX=%s LEVEL=%s）",
    not_measured_one = "**尚未实测。** 这里的内容来自 %s，而 `%s` 中没有这个文件：该目录是在写出它的" ..
      "程序出现之前测得的。在装有 NVIDIA GPU 的机器上运行 `make measure`，会把它写在其他文件旁边。",
    not_measured_many = "**尚未实测。** 这里的内容来自 %s，而 `%s` 中没有这些文件：该目录是在写出它们" ..
      "的程序出现之前测得的。在装有 NVIDIA GPU 的机器上运行 `make measure`，会把它们写在其他文件旁边。",
    not_measured_gpus = "**尚未实测。** 这里的内容来自 %s，而 `%s` 中没有它：写出它的程序需要 %s 块 GPU，" ..
      "而该目录是在 GPU 更少的机器上测得的。在有 %s 块或更多 NVIDIA GPU 的机器上运行 `make measure`，" ..
      "会把它和书中其余的数据一起写出。",
    placeholder = "**占位数据。** 本次构建中的图表和数字来自编造的数值（`%s`），不是在 GPU 上测得的。" ..
      "在 GPU 上运行 `make measure` 才能得到真实的书。",
    other_edition = "<p class=\"edition\" lang=\"en\"><a href=\"../index.html\">English edition</a></p>",
  },
}

M.lang = "en"

-- The edition's language from the document's `lang` ("zh-CN" -> zh); an unknown one stops.
function M.set_language(lang)
  local short = (lang or "en"):match("^(%a+)")
  if not phrases[short] then
    error("book: no phrases for the language '" .. tostring(lang) .. "' (book/filter/words.lua)")
  end
  M.lang = short
end

function M.say(key, ...)
  local pattern = phrases[M.lang][key]
  if not pattern then
    error("book: book/filter/words.lua has no '" .. key .. "' in the language '" .. M.lang .. "'")
  end
  return string.format(pattern, ...)
end

-- Every language has every phrase: checked whenever the filter loads.
for language, table_of in pairs(phrases) do
  for key in pairs(phrases.en) do
    if not table_of[key] then
      error("book: book/filter/words.lua's '" .. language .. "' lacks '" .. key .. "'")
    end
  end
end

return M
