-- morc.docs: the Lua API reference, generated from the doc strings (morc.doc), so it cannot drift.
-- docs/lua-api.md is this module's markdown(); a test compares the two.

local morc = morc
local D = {}

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do
    if type(k) == "string" then keys[#keys + 1] = k end
  end
  table.sort(keys)
  return keys
end

-- Documented things are functions, tables of functions and userdata such as morc.engine.
local function wants_doc(v)
  return type(v) == "function" or type(v) == "userdata"
end

--- Sections of the reference: { title, entries = { { name, doc } } }, and the public names lacking a doc string.
function D.sections()
  local sections, missing = {}, {}
  local function section(title, prefix, t, skip)
    local entries = {}
    if morc.doc_of(t) then entries[#entries + 1] = { name = prefix, doc = morc.doc_of(t) } end
    for _, k in ipairs(sorted_keys(t)) do
      local v = t[k]
      if not (skip and skip[k]) and wants_doc(v) and not k:match("^_") then
        local doc = morc.doc_of(v)
        if doc then entries[#entries + 1] = { name = prefix .. "." .. k, doc = doc }
        else missing[#missing + 1] = prefix .. "." .. k end
      end
    end
    sections[#sections + 1] = { title = title, entries = entries }
  end
  local globals = {}
  for _, name in ipairs({ "help", "pcall", "skills" }) do
    globals[#globals + 1] = { name = name, doc = morc.doc_of(_G[name]) or "" }
    if not morc.doc_of(_G[name]) then missing[#missing + 1] = name end
  end
  sections[1] = { title = "Globals", entries = globals }
  section("morc", "morc", morc, { lib = true, docs = true })
  section("morc.model — robot models (SI units)", "morc.model", morc.model)
  section("morc.lib — libraries", "morc.lib", morc.lib)
  section("morc.docs — this reference", "morc.docs", morc.docs)
  section("morc.testing — Lua tests", "morc.testing", require "morc.testing")
  local skills = {}
  for _, s in ipairs(morc.skills()) do skills[#skills + 1] = { name = s.name, doc = morc.doc_of(s) or s.doc } end
  if #skills > 0 then sections[#sections + 1] = { title = "Skills loaded at start", entries = skills } end
  local kinds = {}
  for _, k in ipairs(morc.components()) do
    if k.origin == "native" then kinds[#kinds + 1] = { name = k.name, doc = k.doc } end
  end
  sections[#sections + 1] = { title = "Native component kinds (help(\"name\") shows ports and parameters)", entries = kinds }
  return sections, missing
end

--- The reference as markdown (what docs/lua-api.md holds).
function D.markdown()
  local sections = D.sections()
  local out = {
    "# morc Lua API",
    "",
    "Generated from the doc strings in the code (`morc.doc`); do not edit by hand.",
    "Regenerate after changing a doc string: `MORC_BLESS=1 cargo test --test lua_docs`.",
    "In the REPL or a program, `help(x)` shows the same text.",
  }
  for _, s in ipairs(sections) do
    out[#out + 1] = ""
    out[#out + 1] = "## " .. s.title
    for _, e in ipairs(s.entries) do
      out[#out + 1] = ""
      out[#out + 1] = "### `" .. e.name .. "`"
      out[#out + 1] = ""
      out[#out + 1] = "```text"
      out[#out + 1] = e.doc
      out[#out + 1] = "```"
    end
  end
  return table.concat(out, "\n") .. "\n"
end

morc.docs = D
morc.doc(D.sections, "morc.docs.sections() — the reference as { title, entries = { name, doc } } sections, and the list of public names without a doc string.")
morc.doc(D.markdown, "morc.docs.markdown() — the Lua API reference as markdown: docs/lua-api.md.")
return D
