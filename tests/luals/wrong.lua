-- What the stubs must catch: each line is a type error a checker reports (tests/lua_luals.rs).
local a = morc.assembly "wrong"
a:connect("ref.y", 42)
local r = morc.engine:run("not an assembly")
print(r.okay)
morc.lib.find(7)
morc.component { doc = "a component without a name", step = function(self, inp, out, t) end }
morc.component { name = "c", step = function(self, inp, out, t) return t:upper() end }
ptp { speed = 50 }
