-- Registered when the library loads: assemblies then name it "kindlib.scale".
return morc.register(morc.component {
  name = "scale", doc = "y = k·u, a Lua component of the kindlib library",
  inputs = { "u" }, outputs = { "y" }, params = { k = 2 },
  step = function(self, inp, out) out.y = self.k * inp.u end,
})
