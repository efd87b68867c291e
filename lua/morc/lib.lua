-- morc.lib: libraries of skills, assemblies, components and FMUs shared between labs.
--
-- A library is a folder NAME/ holding a manifest NAME/morc-lib.lua:
--   return { name = "NAME", version = "1.2.0", morc = ">=0.1", depends = { other = ">=1.0" }, doc = "…" }
-- and any of skills/ assemblies/ components/ fmus/ tests/. It is found in the folders of
-- morc.lib.path (MORC_PATH, the user library folder, then morc's lua/ stdlib/ skills/ robots/).
-- morc.lib.load "NAME" (or require "lib.NAME") checks morc's version, loads the dependencies,
-- then every components/*.lua (which add component kinds with morc.register, named "NAME.kind")
-- and every skills/*.lua (each returns a morc.skill). require "lib.NAME.assemblies.x" loads
-- NAME/assemblies/x.lua (components/ likewise); an FMU is lib.dir .. "/fmus/x.fmu". Version constraints: ">=1.0", ">1.0", "<=2", "<2", "=1.2.3", "^1.2"
-- (same major, at least 1.2), "~1.2" (same minor), "*"; a bare version means "^"; several are
-- separated by spaces or commas and must all hold.
-- Rust sets morc.lib.path, morc.lib.user_dir, morc.lib.files and morc.lib.manifest (which reads
-- a manifest in a Lua state of its own) before this file runs, and passes `private`: the unchecked
-- folder listing and env_for(dir), the sandbox a library's code runs in (lua/morc/sandbox.lua).

local private = ...
local morc = morc
local L = morc.lib
local files = private.files

local loaded = {}   -- name → library
local envs = {}     -- name → { env, canonical folder }: where the library's code runs
local loading = {}  -- name → true while its dependencies load (cycle detection)

local function parse_version(text)
  if type(text) ~= "string" then return nil end
  local major, rest = text:match("^%s*(%d+)(.*)$")
  if not major then return nil end
  local minor, patch = 0, 0
  local m = rest:match("^%.(%d+)")
  if m then
    minor = tonumber(m)
    rest = rest:sub(#m + 2)
    local p = rest:match("^%.(%d+)")
    if p then patch = tonumber(p) end
  end
  return { tonumber(major), minor, patch }
end

local function compare(a, b)
  for i = 1, 3 do
    if a[i] ~= b[i] then return a[i] < b[i] and -1 or 1 end
  end
  return 0
end

--- morc.lib.satisfies(version, constraint) — whether a version ("1.2.3") meets a constraint (">=1.0 <2", "^1.2", …).
function L.satisfies(version, constraint)
  local v = parse_version(version)
  if not v then error(("'%s' is not a version (expected MAJOR.MINOR.PATCH)"):format(tostring(version)), 2) end
  for item in tostring(constraint or "*"):gmatch("[^%s,]+") do
    local op, rest = item:match("^([<>=^~]*)(.*)$")
    if rest == "*" or item == "*" then goto continue end
    local want = parse_version(rest)
    if not want then error(("'%s' is not a version constraint (e.g. \">=1.0\", \"^1.2\")"):format(item), 2) end
    local c = compare(v, want)
    local ok
    if op == ">=" then ok = c >= 0
    elseif op == ">" then ok = c > 0
    elseif op == "<=" then ok = c <= 0
    elseif op == "<" then ok = c < 0
    elseif op == "=" or op == "==" then ok = c == 0
    elseif op == "~" then ok = c >= 0 and v[1] == want[1] and v[2] == want[2]
    elseif op == "^" or op == "" then ok = c >= 0 and v[1] == want[1] and (want[1] > 0 or v[2] == want[2])
    else error(("'%s': unknown operator '%s' (use >=, >, <=, <, =, ^, ~)"):format(item, op), 2) end
    if not ok then return false end
    ::continue::
  end
  return true
end

local function exists(path)
  local f = io.open(path, "r")
  if f then f:close() return true end
  return false
end

--- morc.lib.find(name) — the folder of library `name` in morc.lib.path, or nil.
function L.find(name)
  for _, root in ipairs(L.path) do
    local dir = root .. "/" .. name
    if exists(dir .. "/morc-lib.lua") then return dir end
  end
  return nil
end

--- morc.lib.list() — the manifests of every library in morc.lib.path (the first of a name wins), sorted by name.
function L.list()
  local seen, list = {}, {}
  for _, root in ipairs(L.path) do
    for _, entry in ipairs(files(root)) do
      local dir = root .. "/" .. entry
      if not seen[entry] and exists(dir .. "/morc-lib.lua") then
        local ok, m = pcall(L.manifest, dir)
        seen[entry] = true
        list[#list + 1] = ok and m or { name = entry, version = "?", dir = dir, error = m }
      end
    end
  end
  table.sort(list, function(a, b) return a.name < b.name end)
  return list
end

local function where_searched()
  return table.concat(L.path, ", ")
end

local function load_library(name, needed_by, constraint)
  if loaded[name] then
    local lib = loaded[name]
    if constraint and not L.satisfies(lib.version, constraint) then
      error(("version conflict: %s needs library '%s' %s, but %s %s is already loaded from %s; " ..
        "install a version of '%s' that meets %s, or change the requirement in %s"):format(
        needed_by.path, name, constraint, name, lib.version, lib.dir, name, constraint, needed_by.path), 0)
    end
    return lib
  end
  if loading[name] then
    error(("library dependency cycle: '%s' depends, through its dependencies, on itself (%s)"):format(name, needed_by and needed_by.path or name), 0)
  end
  local dir = name:find("/", 1, true) and name or L.find(name)
  if not dir then
    if needed_by then
      error(("missing dependency: %s needs library '%s' %s, which is not in the library path (%s); " ..
        "install it with `morc lib install PATH|URL` or add its parent folder to MORC_PATH"):format(
        needed_by.path, name, constraint or "", where_searched()), 0)
    end
    error(("library '%s' not found in the library path (%s); `morc lib list` shows what is installed, " ..
      "`morc lib install PATH|URL` adds one"):format(name, where_searched()), 0)
  end
  local m = L.manifest(dir)
  local folder = dir:match("([^/]+)/*$")
  if folder ~= m.name then
    error(("%s: the library is named '%s' but its folder is '%s'; rename one so they match"):format(m.path, m.name, folder), 0)
  end
  if loaded[m.name] then return load_library(m.name, needed_by, constraint) end
  if constraint and not L.satisfies(m.version, constraint) then
    error(("version conflict: %s needs library '%s' %s, but the one found is %s at %s; " ..
      "install a version that meets %s or change the requirement"):format(needed_by.path, m.name, constraint, m.version, dir, constraint), 0)
  end
  if m.morc and not L.satisfies(morc.version, m.morc) then
    error(("%s: library '%s' %s needs morc %s, this is morc %s; use a morc that meets it or another version of the library"):format(
      m.path, m.name, m.version, m.morc, morc.version), 0)
  end
  loading[m.name] = true
  local ok, err = pcall(function()
    local names = {}
    for dep in pairs(m.depends) do names[#names + 1] = dep end
    table.sort(names)
    for _, dep in ipairs(names) do load_library(dep, m, m.depends[dep]) end
  end)
  loading[m.name] = nil
  if not ok then error(err, 0) end
  local lib = { name = m.name, version = m.version, doc = m.doc or "", dir = dir, manifest = m, skills = {},
    capabilities = m.capabilities }
  local env, canonical = private.env_for(dir)
  envs[m.name] = { env = env, dir = canonical }
  loaded[m.name] = lib
  -- components/*.lua register the library's component kinds (morc.register), so that an
  -- assembly finds "NAME.kind" by name once the library is loaded.
  for _, file in ipairs(files(dir .. "/components")) do
    local module = file:match("^(.+)%.lua$")
    if module then require(("lib.%s.components.%s"):format(m.name, module)) end
  end
  for _, file in ipairs(files(dir .. "/skills")) do
    local module = file:match("^(.+)%.lua$")
    if module then
      local skill = require(("lib.%s.skills.%s"):format(m.name, module))
      if getmetatable(skill) and skill.execute then lib.skills[skill.name] = skill end
    end
  end
  return lib
end

--- morc.lib.load(name_or_dir) — loads a library (its dependencies first, versions checked) and returns { name, version, doc, dir, skills }.
function L.load(name)
  if type(name) ~= "string" or name == "" then error("morc.lib.load expects a library name or folder", 2) end
  return load_library((name:gsub("/+$", "")), nil, nil)
end

--- morc.lib.use(name_or_dir) — loads a library and makes its skills globals, for the REPL and short programs; returns nothing.
function L.use(name)
  local lib = L.load(name)
  for skill_name, skill in pairs(lib.skills) do
    local existing = rawget(_G, skill_name)
    if existing ~= nil and existing ~= skill and not (getmetatable(existing) and existing.execute) then
      error(("morc.lib.use '%s': the global '%s' exists already and is not a skill; use lib.skills.%s instead"):format(name, skill_name, skill_name), 2)
    end
    rawset(_G, skill_name, skill)
  end
  -- Nothing returned: at the REPL a returned library would be printed whole (loading is
  -- silent); morc.lib.load gives the library.
end

--- morc.lib.loaded() — the loaded libraries, name → library.
function L.loaded()
  local copy = {}
  for k, v in pairs(loaded) do copy[k] = v end
  return copy
end

-- require "lib.NAME" loads the library; require "lib.NAME.a.b" loads NAME/a/b.lua (the library loaded first).
table.insert(package.searchers, 2, function(module)
  local name, rest = module:match("^lib%.([^.]+)%.?(.*)$")
  if not name then return nil end
  if rest == "" then
    return function() return load_library(name, nil, nil) end, name
  end
  if not loaded[name] and not L.find(name) then return ("\n\tno library '%s' in the library path (%s)"):format(name, where_searched()) end
  -- The library first (its manifest, dependencies, sandbox), then its file in its sandbox,
  -- named by its canonical path so morc's capability checks know it for the library's code.
  local lib = load_library(name, nil, nil)
  local box = envs[lib.name]
  local rel = rest:gsub("%.", "/") .. ".lua"
  local path = ("%s/%s"):format(box.dir, rel)
  if not exists(path) then return ("\n\tno file '%s'"):format(path) end
  local f = assert(io.open(path, "rb"))
  local text = f:read("a")
  f:close()
  local chunk, err = load(text, "@" .. path, "t", box.env)
  if not chunk then error(err, 0) end
  return chunk, path
end)

morc.doc(L.load, [[morc.lib.load(name_or_dir: string) → library — loads a library and returns { name, version, doc, dir, skills }.
Checks the manifest's morc version and loads its dependencies first (versions checked: a conflict or a missing
library is an error naming the manifest and what to do), then runs every components/*.lua (which add component kinds
with morc.register, named "NAME.kind") and every skills/*.lua. require "lib.NAME" does the same;
require "lib.NAME.assemblies.x" loads NAME/assemblies/x.lua; FMUs are at lib.dir .. "/fmus/".
A library is a folder NAME/ with a manifest NAME/morc-lib.lua returning
  { name = "NAME", version = "1.0.0", morc = ">=0.1", depends = { other = ">=1.0" }, doc = "…" }
and skills/, assemblies/, components/, fmus/, tests/ (`morc lib new NAME` makes one; `morc test NAME` runs its tests).
  library.name: string   library.version: string   library.doc: string   library.dir: string   library.manifest: manifest
  library.skills: table<string, skill>]])
morc.doc(L.use, "morc.lib.use(name_or_dir: string) — morc.lib.load, then each of the library's skills becomes a global: morc.lib.use \"motion\"; move { 0, -90, 90, 0, 0, 0 }. Returns nothing and prints nothing (morc.lib.load returns the library).")
morc.doc(L.find, "morc.lib.find(name: string) → string? — the folder of library `name` in morc.lib.path, or nil.")
morc.doc(L.list, "morc.lib.list() → manifest[] — the manifests of the libraries in morc.lib.path ({ name, version, doc, dir, depends, morc }), sorted by name.")
morc.doc(L.manifest, [[morc.lib.manifest(dir: string) → manifest — reads and checks dir/morc-lib.lua (in a Lua state of its own: a manifest only returns a table): { name, version, morc, depends, capabilities, doc, dir, path }.
  manifest.name: string   manifest.version: string   manifest.doc?: string   manifest.dir: string   manifest.path: string
  manifest.morc?: string   manifest.depends?: table<string, string>   manifest.capabilities?: string[]   manifest.error?: string]])
morc.doc(L.satisfies, [[morc.lib.satisfies(version: string, constraint: string) → boolean — whether "1.2.3" meets a constraint: ">=1.0", ">1", "<=2", "<2",
"=1.2.3", "^1.2" (same major, ≥ 1.2), "~1.2" (same minor), "*"; a bare version means ^; several (space or comma) must all hold.]])
morc.doc(L.loaded, "morc.lib.loaded() → table<string, library> — the libraries loaded so far, name → library.")
morc.doc(L.files, "morc.lib.files(dir: string) → string[] — the names of the entries of a folder, sorted ({} if it does not exist).")
morc.doc(L, "morc.lib — libraries shared between labs: morc.lib.load \"name\", morc.lib.list(), morc.lib.path (folders searched in order).\n  morc.lib.path: string[]   morc.lib.user_dir: string")

return L
