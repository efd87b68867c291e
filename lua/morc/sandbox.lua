-- The environment a library's code runs in (its _ENV): the safe part of Lua as is, and every
-- way out — io, os, load, require, package, debug, metatables of strings, coroutines — either
-- limited to the library's folder or allowed only with a capability its manifest declares and
-- the user granted (see `guard` from src/lua/lib.rs). morc's own functions check the same
-- capabilities themselves (they see library code on the call stack).
--
-- Called as chunk(G, register_thread): G the real globals; register_thread(co, name) marks a
-- coroutine as the library's. Returns function(guard) → env. Nothing here is reachable from
-- a library: the env holds only wrappers bound to its own guard.

local G, register_thread = ...
local rawget, type, select, tostring, error, pairs, next = G.rawget, G.type, G.select, G.tostring, G.error, G.pairs, G.next
local string_, table_ = G.string, G.table
local real_io, real_os, real_load, real_require, real_package = G.io, G.os, G.load, G.require, G.package
local co_create, co_resume, co_status = G.coroutine.create, G.coroutine.resume, G.coroutine.status

local SAFE = { "assert", "error", "ipairs", "next", "pairs", "pcall", "print", "rawequal", "rawlen", "rawget",
  "rawset", "select", "setmetatable", "tonumber", "tostring", "type", "xpcall", "_VERSION", "collectgarbage", "warn" }
-- morc's API: the same for libraries and programs (its functions check capabilities themselves).
local MORC = { "morc", "help", "skills", "plot" }

local function copy(t)
  local c = {}
  for k, v in pairs(t or {}) do c[k] = v end
  return c
end

return function(guard)
  local env = {}
  -- Errors point at the library's line: level 3 from a wrapper calling deny, 4 through need/readable.
  local function deny(cap, what, level) error(guard.denial(cap, what), level or 3) end
  local function need(cap, what) if not guard.allows(cap) then deny(cap, what, 4) end end

  for _, k in G.ipairs(SAFE) do env[k] = rawget(G, k) end
  for _, k in G.ipairs(MORC) do env[k] = rawget(G, k) end
  -- morc's settings (morc.bus, morc.record_dir, …) and functions are the program's: a library
  -- reads them through a view it cannot write.
  local morc = G.morc
  env.morc = G.setmetatable({}, {
    __index = morc,
    __newindex = function(_, k)
      error(("library '%s' may not change morc.%s (morc's settings and functions belong to the program)"):format(guard.name, tostring(k)), 2)
    end,
    __pairs = function() return next, morc, nil end,
    __len = function() return #morc end,
    __metatable = false,
  })
  env.string, env.table, env.math, env.utf8 = copy(G.string), copy(G.table), copy(G.math), copy(G.utf8)
  env._G = env

  -- getmetatable("").__index is the string table every program shares: a library sees a copy.
  local string_meta = { __index = env.string }
  env.getmetatable = function(v)
    if type(v) == "string" then return string_meta end
    return G.getmetatable(v)
  end

  -- Coroutines it makes are its own, even when their body is one of morc's functions.
  local co = copy(G.coroutine)
  co.create = function(f)
    local th = co_create(f)
    register_thread(th, guard.name)
    return th
  end
  co.wrap = function(f)
    local th = co.create(f)
    return function(...)
      local r = table_.pack(co_resume(th, ...))
      if not r[1] then error(r[2], 0) end
      return table_.unpack(r, 2, r.n)
    end
  end
  env.coroutine = co

  -- io: stdin/stdout as any program; files in its own folder to read; the rest needs 'io'.
  local function readable(path, fn)
    if type(path) ~= "string" then error(("bad argument #1 to '%s' (string expected, got %s)"):format(fn, type(path)), 3) end
    if not guard.readable(path) then deny("io", ("use io outside its folder (%s %q)"):format(fn, path), 4) end
  end
  local io = { stdin = real_io.stdin, stdout = real_io.stdout, stderr = real_io.stderr, type = real_io.type, read = real_io.read, write = real_io.write }
  io.open = function(path, mode)
    mode = mode == nil and "r" or mode
    if type(mode) == "string" and mode:find("[wa+]") then
      need("io", ("use io outside its folder (io.open %q, %q)"):format(tostring(path), mode))
    else
      readable(path, "io.open")
    end
    return real_io.open(path, mode)
  end
  io.lines = function(path, ...)
    if path == nil then return real_io.lines() end
    readable(path, "io.lines")
    return real_io.lines(path, ...)
  end
  io.close = function(f)
    if f == nil then error("io.close needs a file (the default output is not a library's to close)", 2) end
    return f:close()
  end
  io.input = function(f)
    if f == nil then return real_io.input() end
    need("io", "use io outside its folder (io.input changes every program's input)")
    return real_io.input(f)
  end
  io.output = function(f)
    if f == nil then return real_io.output() end
    need("io", "use io outside its folder (io.output changes every program's output)")
    return real_io.output(f)
  end
  io.tmpfile = function() need("io", "use io outside its folder (io.tmpfile)") return real_io.tmpfile() end
  io.popen = function(cmd, ...) need("process", ("start a process (io.popen %q)"):format(tostring(cmd))) return real_io.popen(cmd, ...) end
  env.io = io

  local os = { clock = real_os.clock, date = real_os.date, time = real_os.time, difftime = real_os.difftime, getenv = real_os.getenv }
  os.execute = function(cmd, ...) need("process", ("start a process (os.execute %q)"):format(tostring(cmd))) return real_os.execute(cmd, ...) end
  os.exit = function(...) need("process", "end morc (os.exit)") return real_os.exit(...) end
  os.remove = function(path) need("io", ("use io outside its folder (os.remove %q)"):format(tostring(path))) return real_os.remove(path) end
  os.rename = function(a, b) need("io", ("use io outside its folder (os.rename %q)"):format(tostring(a))) return real_os.rename(a, b) end
  os.tmpname = function() need("io", "use io outside its folder (os.tmpname)") return real_os.tmpname() end
  os.setlocale = function(locale, ...)
    if locale ~= nil then need("process", "change the locale of the whole process (os.setlocale)") end
    return real_os.setlocale(locale, ...)
  end
  env.os = os

  -- load: text only unless 'binary'; its chunks run in this environment and carry the
  -- library's folder in their name (so morc's checks see them as the library's).
  local function load(chunk, name, mode, ...)
    local chunk_env = env
    if select("#", ...) > 0 then chunk_env = ... end
    if type(chunk) == "function" then
      local parts, size = {}, 0
      while true do
        local piece = chunk()
        if piece == nil or piece == "" then break end
        if type(piece) ~= "string" then return nil, "reader function must return a string" end
        size = size + #piece
        parts[#parts + 1] = piece
      end
      chunk = table_.concat(parts)
    end
    if type(chunk) ~= "string" then error(("bad argument #1 to 'load' (string expected, got %s)"):format(type(chunk)), 2) end
    mode = mode == nil and "bt" or mode
    if not guard.allows("binary") then
      if chunk:byte(1) == 27 then deny("binary", "load binary chunks (string.dump'd code)") end
      if mode == "b" then deny("binary", "load binary chunks (load with mode \"b\")") end
      mode = "t"
    end
    return real_load(chunk, guard.chunkname("load", tostring(name or "?")), mode, chunk_env)
  end
  env.load = load

  local function read_all(path)
    local f, err = real_io.open(path, "rb")
    if not f then return nil, err end
    local text = f:read("a")
    f:close()
    return text
  end
  env.loadfile = function(path, mode, ...)
    if path == nil then need("io", "use io outside its folder (loadfile from standard input)") end
    readable(path, "loadfile")
    local text, err = read_all(path)
    if not text then return nil, err end
    local chunk_env = env
    if select("#", ...) > 0 then chunk_env = ... end
    if text:byte(1) == 27 and not guard.allows("binary") then deny("binary", ("load binary chunks (loadfile %q)"):format(path)) end
    return real_load((text:gsub("^#[^\n]*", "")), guard.chunkname("loadfile", path), guard.allows("binary") and (mode or "bt") or "t", chunk_env)
  end
  env.dofile = function(path)
    local f, err = env.loadfile(path)
    if not f then error(err, 2) end
    return f()
  end

  -- require: other libraries (each in its own sandbox), morc's modules, its own files; anything
  -- else found on package.path runs with this library's rights; C modules need 'binary'.
  local loaded = { string = env.string, table = env.table, math = env.math, utf8 = env.utf8, coroutine = co, io = io, os = os, _G = env, morc = env.morc }
  local package = { loaded = loaded, preload = {}, path = real_package.path, cpath = real_package.cpath, config = real_package.config, searchers = {}, searchpath = real_package.searchpath }
  package.loadlib = function(path, fn)
    need("binary", ("load binary code (package.loadlib %q)"):format(tostring(path)))
    return real_package.loadlib(path, fn)
  end
  loaded.package = package
  env.package = package
  env.debug = nil
  env.require = function(name)
    if type(name) ~= "string" then error(("bad argument #1 to 'require' (string expected, got %s)"):format(type(name)), 2) end
    local v = rawget(loaded, name)
    if v ~= nil then return v end
    if name == "debug" then
      error(("library '%s' may not use the debug library: it reaches past every limit, and no capability grants it"):format(guard.name), 2)
    end
    if name == "morc" or name:find("^morc%.") or name:find("^lib%.") then return real_require(name) end
    local file = real_package.searchpath(name, real_package.path)
    if file then
      if guard.is_morc_code(file) then return real_require(name) end
      local text, err = read_all(file)
      if not text then error(("module '%s': %s"):format(name, err), 2) end
      local chunk, cerr = real_load(text, guard.chunkname("require", file), "t", env)
      if not chunk then error(cerr, 0) end
      local result = chunk(name, file)
      if result == nil then result = true end
      loaded[name] = result
      return result
    end
    if real_package.searchpath(name, real_package.cpath) then
      need("binary", ("load binary code (the C module '%s')"):format(name))
      return real_require(name)
    end
    error(("module '%s' not found: library '%s' may require other libraries (\"lib.NAME\"), morc's modules and Lua modules on package.path"):format(name, guard.name), 2)
  end
  return env
end
