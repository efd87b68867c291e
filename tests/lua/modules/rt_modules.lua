-- Component kinds in a plain module (found by require on package.path), for
-- tests/lua/rt_components.lua: upvalues, a runtime error with its line, a memory hoarder.
local M = {}

local steps_of = {}   -- per instance, kept by the module: an upvalue of step

M.counter = morc.component {
  name = "rt_counter", doc = "y = how many steps this instance has made (kept in a module table)",
  outputs = { "y" },
  step = function(self, inp, out)
    steps_of[self.name] = (steps_of[self.name] or 0) + 1
    out.y = steps_of[self.name]
  end,
}

M.faulty = morc.component {
  name = "rt_faulty", doc = "fails at t = 3 ms",
  inputs = { "u" }, outputs = { "y" },
  step = function(self, inp, out, t)
    if t >= 0.003 then
      local reading = nil
      return reading.value -- line 22: indexing a nil value
    end
    out.y = inp.u
  end,
}

M.hoard = morc.component {
  name = "rt_hoard", doc = "keeps a 1000-element table from every step: exhausts any pool",
  outputs = { "y" },
  init = function(self) self.kept = {} end,
  step = function(self, inp, out)
    local t = {}
    for i = 1, 1000 do t[i] = i end
    self.kept[#self.kept + 1] = t
    out.y = #self.kept
  end,
}

M.filler = morc.component {
  name = "rt_filler", doc = "fills its pool to the last bytes with small tables (no large block left for the pool to refuse)",
  outputs = { "y" },
  init = function(self) self.n = 0 end,
  step = function(self, inp, out)
    for _ = 1, 2000 do self.head = { self.head }; self.n = self.n + 1 end
    out.y = self.n
  end,
  terminate = function(self) return { filled = self.n } end,
}

M.talker = morc.component {
  name = "rt_talker", doc = "prints at steps 1 and 3",
  outputs = { "y" },
  init = function(self) self.n = 0 end,
  step = function(self, inp, out, t)
    self.n = self.n + 1
    if self.n == 1 or self.n == 3 then print("talker step", self.n, ("t=%.3f"):format(t)) end
    out.y = self.n
  end,
}

M.spin = morc.component {
  name = "rt_spin", doc = "loops forever at t = 2 ms, even catching errors (allocating nothing: only the time limit stops it)",
  outputs = { "y" },
  step = function(self, inp, out, t)
    if t >= 0.002 then
      local busy = function() for i = 1, 100 do end end
      while true do pcall(busy) end
    end
    out.y = t
  end,
}

M.spin_after_filling = morc.component {
  name = "rt_spin_full", doc = "at t = 2 ms makes more garbage than its pool holds, then loops forever without allocating",
  outputs = { "y" },
  step = function(self, inp, out, t)
    if t >= 0.002 then
      for i = 1, 40000 do local garbage = {} end
      while true do end
    end
    out.y = t
  end,
}

M.spin_in_coroutine = morc.component {
  name = "rt_spin_co", doc = "loops forever inside a coroutine at t = 2 ms, catching the coroutine's errors",
  outputs = { "y" },
  step = function(self, inp, out, t)
    if t >= 0.002 then
      local f = coroutine.wrap(function() while true do end end)
      while true do pcall(f) end
    end
    out.y = t
  end,
}

return M
