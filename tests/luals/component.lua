-- A library's component as its author writes it (components/gain2.lua): with the stubs, the
-- definition table and step's self, inp, out, t are typed (tests/lua_luals.rs).
return morc.register(morc.component {
  name = "gain2",
  doc = "y = k·u, six elements",
  inputs = { "u[6]" },
  outputs = { "y[6]" },
  params = { k = 2 },
  init = function(self, out)
    for i = 1, 6 do out.y[i] = 0 end
  end,
  step = function(self, inp, out, t)
    for i = 1, 6 do out.y[i] = self.k * inp.u[i] end
    if t > 10 then return "done" end
  end,
  terminate = function(self) return { gain = self.k } end,
})
